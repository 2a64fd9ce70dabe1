/**
 * A tool that asks its caller's user mid-call (`InvokeResult.inputRequired`, MCP 2026-07-28
 * `input_required`) behaves the same isolated in a worker as in process. The same real package
 * (test/fixtures/asking-tools) is loaded through a real config file by two real `aptix serve`
 * processes, one in process and one with `isolation: "worker"`; every answer is compared between them.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_ROOT, startHostWithConfig, type RunningHost } from './support.js';

const PACKAGE = join(HOST_ROOT, 'test', 'fixtures', 'asking-tools');
const TOOL = 'ask_name_and_colour';
const FIRST_PARTY = ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change'];
const modes = { extend: { general: [TOOL, 'ask_badly'] } };

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };

async function modernClient(url: string, answer?: (message: string) => Answer): Promise<Client> {
  const client = new Client(
    { name: 'aptix-isolation-input', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' }, ...(answer ? { capabilities: { elicitation: { form: {} } } } : {}) },
  );
  if (answer)
    client.setRequestHandler(
      'elicitation/create',
      async (request) => answer((request.params as { message: string }).message) as never,
    );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

/** One raw 2026-07-28 tools/call, so a test can hold and alter the requestState. */
async function rawCall(
  url: string,
  params: Record<string, unknown>,
): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
        },
      },
    }),
  });
  const text = await response.text();
  return text.startsWith('{')
    ? JSON.parse(text)
    : JSON.parse(
        text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5))
          .pop()!,
      );
}

const textOf = (result: object) =>
  (((result as { content?: unknown }).content as Array<{ text?: string }>) ?? [])
    .map((block) => block.text ?? '')
    .join('\n');

let inProcess: RunningHost;
let isolated: RunningHost;
const cleanups: Array<() => void> = [];
beforeAll(async () => {
  const started = await Promise.all([
    startHostWithConfig({ toolPackages: [...FIRST_PARTY, PACKAGE], modes }),
    startHostWithConfig({
      toolPackages: [...FIRST_PARTY, { package: PACKAGE, isolation: 'worker', workers: 1 }],
      modes,
    }),
  ]);
  [inProcess, isolated] = started.map((entry) => entry.host) as [RunningHost, RunningHost];
  cleanups.push(...started.map((entry) => () => entry.space.cleanup()));
}, 60_000);
afterAll(async () => {
  await Promise.all([inProcess?.stop(), isolated?.stop()]);
  for (const cleanup of cleanups) cleanup();
});

/** The same scenario on both hosts: what each answered, and whether the tool ran in a worker. */
async function onBoth<T>(scenario: (host: RunningHost) => Promise<T>): Promise<{ inProcess: T; isolated: T }> {
  return { inProcess: await scenario(inProcess), isolated: await scenario(isolated) };
}

/** A tool answer's JSON with where it ran taken out, so both hosts' answers compare equal. */
function withoutPlace(text: string): { inWorker: boolean; rest: Record<string, unknown> } {
  const { inWorker, ...rest } = JSON.parse(text) as { inWorker: boolean };
  return { inWorker, rest };
}

describe('an isolated tool asks the user exactly as an in-process one does', () => {
  it('over MCP 2026-07-28 (v2 SDK client): two rounds of questions, the state carried between them, the answers reaching the worker', async () => {
    const both = await onBoth(async (host) => {
      const asked: string[] = [];
      const client = await modernClient(host.url, (message) => {
        asked.push(message);
        return message.startsWith('What is your name')
          ? { action: 'accept', content: { name: 'Ada' } }
          : { action: 'accept', content: { colour: 'teal' } };
      });
      try {
        const result = await client.callTool({ name: TOOL, arguments: { greeting: 'Welcome' } });
        return { asked, isError: result.isError === true, answer: withoutPlace(textOf(result)) };
      } finally {
        await client.close();
      }
    });
    expect(both.isolated.asked).toEqual(['What is your name?', 'Which colour do you like, Ada?']);
    expect(both.isolated.answer.rest).toEqual({ text: 'Welcome, Ada, lover of teal!', rounds: 2, canAsk: true });
    expect(both.isolated.answer.inWorker).toBe(true);
    expect(both.inProcess.answer.inWorker).toBe(false);
    expect({ ...both.isolated, answer: both.isolated.answer.rest }).toEqual({
      ...both.inProcess,
      answer: both.inProcess.answer.rest,
    });
  });

  it('a declined question reaches the isolated tool, which answers it as in process', async () => {
    const both = await onBoth(async (host) => {
      const client = await modernClient(host.url, () => ({ action: 'decline' }));
      try {
        const result = await client.callTool({ name: TOOL, arguments: {} });
        return { isError: result.isError === true, text: textOf(result) };
      } finally {
        await client.close();
      }
    });
    expect(both.isolated).toEqual({ isError: true, text: 'No name was given; nothing was done.' });
    expect(both.isolated).toEqual(both.inProcess);
  });

  it('the questions and sealed state the worker sent, and a tampered state refused before the worker runs anything', async () => {
    const both = await onBoth(async (host) => {
      const first = (await rawCall(host.url, { name: TOOL, arguments: {} })).result;
      const second = (
        await rawCall(host.url, {
          name: TOOL,
          arguments: {},
          inputResponses: { name: { action: 'accept', content: { name: 'Grace' } } },
          requestState: first.requestState,
        })
      ).result;
      const tampered = await rawCall(host.url, {
        name: TOOL,
        arguments: {},
        inputResponses: { name: { action: 'accept', content: { name: 'Mallory' } } },
        requestState: `${first.requestState}x`,
      });
      return {
        first: {
          resultType: first.resultType,
          inputRequests: first.inputRequests,
          sealed: typeof first.requestState === 'string',
        },
        second: { resultType: second.resultType, inputRequests: second.inputRequests },
        tampered: tampered.error?.code,
      };
    });
    expect(both.isolated.first).toEqual({
      resultType: 'input_required',
      inputRequests: {
        name: {
          method: 'elicitation/create',
          params: {
            message: 'What is your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          },
        },
      },
      sealed: true,
    });
    expect(both.isolated.second.inputRequests.colour.params.message).toBe('Which colour do you like, Grace?');
    expect(both.isolated.tampered).toBe(-32602);
    expect(both.isolated).toEqual(both.inProcess);
  });

  it('a caller that cannot ask (HTTP invoke, an MCP client without elicitation, of either era) gets INPUT_REQUIRED, as in process', async () => {
    const both = await onBoth(async (host) => {
      const response = await fetch(`${host.url}/v1/tools/${TOOL}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: {} }),
      });
      const http = (await response.json()) as {
        successful: boolean;
        errors: Array<{ code?: string; message: string }>;
        inputRequired?: unknown;
      };
      const mute = await modernClient(host.url);
      // A 2025 client that declared elicitation is asked instead (mcp-legacy-ask.test.ts).
      const legacy = new LegacyClient({ name: 'aptix-isolation-input-v1', version: '1.0.0' });
      await legacy.connect(new LegacyTransport(new URL(`${host.url}/mcp`)));
      try {
        const modern = await mute.callTool({ name: TOOL, arguments: {} });
        const old = await legacy.callTool({ name: TOOL, arguments: {} });
        return {
          http: { status: response.status, http },
          modern: { isError: modern.isError, text: textOf(modern) },
          legacy: { isError: old.isError, text: textOf(old as object) },
        };
      } finally {
        await mute.close();
        await legacy.close();
      }
    });
    expect(both.isolated.http.http.successful).toBe(false);
    expect(both.isolated.http.http.errors[0]!.code).toBe('INPUT_REQUIRED');
    expect(both.isolated.http.http).not.toHaveProperty('inputRequired');
    expect(both.isolated.modern.isError).toBe(true);
    expect(both.isolated.legacy.isError).toBe(true);
    expect(both.isolated).toEqual(both.inProcess);
  });

  it('questions the contract refuses (too many, too large a state) are a malformed result, as in process', async () => {
    const both = await onBoth(async (host) => {
      const many = (await rawCall(host.url, { name: 'ask_badly', arguments: { how: 'many' } })).result;
      const huge = (await rawCall(host.url, { name: 'ask_badly', arguments: { how: 'huge' } })).result;
      return {
        many: { isError: many.isError, text: textOf(many) },
        huge: { isError: huge.isError, text: textOf(huge) },
      };
    });
    expect(both.isolated.many).toEqual({
      isError: true,
      text: 'ask_badly returned a malformed result: inputRequired.inputRequests must hold 1 to 8 questions (it holds 9).',
    });
    expect(both.isolated.huge.text).toMatch(
      /^ask_badly returned a malformed result: inputRequired.state is \d+ bytes as JSON, over the limit of 8192\.$/,
    );
    expect(both.isolated).toEqual(both.inProcess);
  });
});
