/**
 * An invalid gated call never asks anyone (docs/approvals.md): the gate checks the arguments the way
 * the executor will check the approved call (a `__proto__` or `constructor.prototype` key refused at any
 * depth) before it stores an approval or asks a person, over HTTP, both MCP revisions and the agent
 * loop (against the scripted Responses server). The tool,
 * gated_webhook (test/fixtures/gated-open), leaves one object open to any key, as a bridged tool does.
 */
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { call, respond, ScriptedResponsesServer } from '@aptix/reasoner/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawToolsCall, startHostWithConfig, type RunningHost } from './support.js';

const KEY = 'ops-key-0123456789abcdef';
const auth = { authorization: `Bearer ${KEY}` };
const FIXTURE = fileURLToPath(new URL('./fixtures/gated-open/', import.meta.url));
const REFUSAL =
  'Invalid arguments for gated_webhook: the arguments contain a forbidden key (__proto__, or constructor.prototype); remove it.';
/** Arguments whose nested object holds an own "__proto__" key, as JSON.parse makes it (an object literal would set the prototype). */
const VALID_TEXT = '{"target":"https://example.test/hook","payload":{"note":"hi"}}';
const PROTO_TEXT = '{"target":"https://example.test/hook","payload":{"note":"hi","__proto__":{"isAdmin":true}}}';
const CONSTRUCTOR_TEXT =
  '{"target":"https://example.test/hook","payload":{"constructor":{"prototype":{"isAdmin":true}}}}';
const poisoned = () => [
  JSON.parse(PROTO_TEXT) as Record<string, unknown>,
  JSON.parse(CONSTRUCTOR_TEXT) as Record<string, unknown>,
];

const text = (result: object) =>
  (((result as { content?: unknown }).content as Array<{ text?: string }>) ?? [])
    .map((block) => block.text ?? '')
    .join('\n');

describe('a gated call with a prototype key is refused before anyone is asked', () => {
  let host: RunningHost;
  let model: ScriptedResponsesServer;
  let cleanup: () => void;

  beforeAll(async () => {
    model = await ScriptedResponsesServer.start();
    // allowSelfApproval: the key that calls may be asked (and decide), so "nobody is asked" is a real check.
    const started = await startHostWithConfig(
      {
        toolPackages: ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change', FIXTURE],
        approvals: { allowSelfApproval: ['gated_webhook'] },
      },
      {
        APTIX_API_KEYS: `ops=${KEY}`,
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_API_KEY: 'test-key',
        APTIX_MODEL: 'scripted-model',
      },
    );
    host = started.host;
    cleanup = started.space.cleanup;
  });
  afterAll(async () => {
    await host?.stop();
    await model?.close();
    cleanup?.();
  });

  async function approvalsStored(): Promise<unknown[]> {
    return ((await (await fetch(`${host.url}/v1/approvals`, { headers: auth })).json()) as { approvals: unknown[] })
      .approvals;
  }

  async function invoke(body: string): Promise<{ status: number; body: any }> {
    const response = await fetch(`${host.url}/v1/tools/gated_webhook/invoke`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body,
    });
    return { status: response.status, body: await response.json() };
  }

  it('a valid call still waits for a person (the control)', async () => {
    const answer = await invoke(`{"arguments":${VALID_TEXT}}`);
    expect(answer.status).toBe(202);
    expect(answer.body.status).toBe('pending_approval');
    const stored = (await approvalsStored()) as Array<{ id: string }>;
    expect(stored.map((approval) => approval.id)).toEqual([answer.body.approvalId]);
    // Out of the way of the tests below, which expect nothing stored.
    await fetch(`${host.url}/v1/approvals/${answer.body.approvalId}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'deny' }),
    });
  });

  it('over HTTP: the arguments as text or as an object are refused, naming the key, and no approval is stored', async () => {
    const before = (await approvalsStored()).length;
    for (const argumentsText of [PROTO_TEXT, CONSTRUCTOR_TEXT]) {
      const asText = await invoke(JSON.stringify({ arguments: argumentsText }));
      expect(asText.status, argumentsText).toBe(200);
      expect(asText.body).toMatchObject({
        successful: false,
        errors: [{ code: 'INVALID_ARGUMENTS', message: REFUSAL }],
      });
      const asObject = await invoke(`{"arguments":${argumentsText}}`);
      expect(asObject.status, argumentsText).toBe(400);
      expect(asObject.body.error.code).toBe('PROTOTYPE_KEY');
      expect(asObject.body.error.message).toContain('"__proto__"');
    }
    expect(await approvalsStored()).toHaveLength(before);
  });

  it('over MCP 2026-07-28: a client that is asked about a valid call is not asked about these, which fail naming the key, and no approval is stored for them', async () => {
    const before = (await approvalsStored()).length;
    let asked = 0;
    const client = new Client(
      { name: 'aptix-invalid-v2', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler(
      'elicitation/create',
      async () => (asked++, { action: 'accept', content: { decision: 'approve' } }) as never,
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), { requestInit: { headers: auth } }),
    );
    try {
      // The control: a valid call is asked about, approved and run.
      const valid = await client.callTool({ name: 'gated_webhook', arguments: JSON.parse(VALID_TEXT) });
      expect(valid.isError ?? false).toBe(false);
      expect(asked).toBe(1);
      for (const args of poisoned()) {
        const result = await client.callTool({ name: 'gated_webhook', arguments: args });
        expect(result.isError).toBe(true);
        expect(text(result)).toBe(REFUSAL);
        expect(result._meta?.['aptix/approval']).toBeUndefined();
      }
    } finally {
      await client.close();
    }
    expect(asked).toBe(1);
    expect(await approvalsStored()).toHaveLength(before + 1);
  });

  it('over MCP 2026-07-28 from a client that cannot be asked (the fast lane): refused the same way, nothing stored', async () => {
    const before = (await approvalsStored()).length;
    for (const args of poisoned()) {
      const answer = await rawToolsCall(
        host.url,
        { name: 'gated_webhook', arguments: args },
        { key: KEY, capabilities: {} },
      );
      expect(answer.result.resultType).toBe('complete');
      expect(answer.result.isError).toBe(true);
      expect(text(answer.result)).toBe(REFUSAL);
    }
    expect(await approvalsStored()).toHaveLength(before);
  });

  it('over MCP 2025-11-25: elicitation/create is sent for a valid call and never for these, which fail naming the key, and no approval is stored for them', async () => {
    const before = (await approvalsStored()).length;
    let asked = 0;
    const client = new LegacyClient(
      { name: 'aptix-invalid-v1', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler(
      ElicitRequestSchema,
      async () => (asked++, { action: 'accept', content: { decision: 'approve' } }) as never,
    );
    await client.connect(new LegacyTransport(new URL(`${host.url}/mcp`), { requestInit: { headers: auth } }));
    try {
      const valid = await client.callTool({ name: 'gated_webhook', arguments: JSON.parse(VALID_TEXT) });
      expect(valid.isError ?? false).toBe(false);
      expect(asked).toBe(1);
      for (const args of poisoned()) {
        const result = await client.callTool({ name: 'gated_webhook', arguments: args });
        expect(result.isError).toBe(true);
        expect(text(result)).toBe(REFUSAL);
      }
    } finally {
      await client.close();
    }
    expect(asked).toBe(1);
    expect(await approvalsStored()).toHaveLength(before + 1);
  });

  it('in the agent loop: the turn does not pause for approval, the model reads the refusal naming the key, and no approval is stored', async () => {
    const before = (await approvalsStored()).length;
    const post = async (path: string, body: unknown) =>
      (
        await fetch(host.url + path, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json() as Promise<any>;
    const { id } = await post('/v1/sessions', {});
    model.script(respond(undefined, call('call_proto', 'gated_webhook', PROTO_TEXT)), respond('The hook was refused.'));
    const turn = await post(`/v1/sessions/${id}/messages`, { input: 'Post the note.' });
    expect(turn).toMatchObject({ status: 'completed', output: 'The hook was refused.' });
    const sent = model.requests
      .at(-1)!
      .body.input.find((item) => item.type === 'function_call_output' && item.call_id === 'call_proto');
    expect(String(sent?.output)).toContain(
      'the arguments contain a forbidden key (__proto__, or constructor.prototype); remove it',
    );
    expect(await approvalsStored()).toHaveLength(before);
  });
});
