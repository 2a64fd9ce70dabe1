/**
 * Tools that ask the client itself mid-call (`InvokeResult.inputRequired`): its model
 * (`sampling/createMessage`) and its roots (`roots/list`). On a 2025 session the host sends each request to
 * the client and calls the tool again; on 2026-07-28 the call answers `input_required` and the client's
 * retry brings the answers. A client that cannot answer gets SAMPLING_UNAVAILABLE / ROOTS_UNAVAILABLE (2025,
 * HTTP invoke) or -32021 MissingRequiredClientCapability (2026-07-28). Real `aptix serve`, the real
 * test/fixtures/sampling-tools package, the real v1 and v2 SDK clients and the Python `mcp` client.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_ROOT, rawToolsCall, startHostWithConfig, type RunningHost } from './support.js';

const PACKAGE = join(HOST_ROOT, 'test', 'fixtures', 'sampling-tools');
const FIRST_PARTY = ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change'];
const TOOLS = ['summarise_with_model', 'list_client_roots', 'plan_in_roots'];

let host: RunningHost;
let isolated: RunningHost;
const cleanups: Array<() => void> = [];
beforeAll(async () => {
  const modes = { extend: { general: TOOLS } };
  const started = await Promise.all([
    startHostWithConfig({ toolPackages: [...FIRST_PARTY, PACKAGE], modes }),
    startHostWithConfig({
      toolPackages: [...FIRST_PARTY, { package: PACKAGE, isolation: 'worker', workers: 1 }],
      modes,
    }),
  ]);
  [host, isolated] = started.map((entry) => entry.host) as [RunningHost, RunningHost];
  cleanups.push(...started.map((entry) => () => entry.space.cleanup()));
}, 60_000);
afterAll(async () => {
  await Promise.all([host?.stop(), isolated?.stop()]);
  for (const cleanup of cleanups) cleanup();
});

type SamplingParams = { messages: unknown[]; maxTokens: number; systemPrompt?: string; temperature?: number };
const ROOTS = [{ uri: 'file:///work/project', name: 'Project' }, { uri: 'file:///work/docs' }];
const modelAnswer = (text: string) => ({
  role: 'assistant',
  content: { type: 'text', text },
  model: 'test-model',
  stopReason: 'endTurn',
});

/** A v1 (2025) client; it declares sampling and roots only when it is given answers for them, and records each request. */
async function legacyClient(
  url: string,
  answers: { sample?: (params: SamplingParams) => unknown; roots?: () => unknown } = {},
): Promise<LegacyClient> {
  const client = new LegacyClient(
    { name: 'aptix-sampling-v1', version: '1.0.0' },
    {
      capabilities: {
        ...(answers.sample ? { sampling: {} } : {}),
        ...(answers.roots ? { roots: {} } : {}),
      },
    },
  );
  if (answers.sample) {
    const sample = answers.sample;
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => sample(request.params as never) as never);
  }
  if (answers.roots) {
    const roots = answers.roots;
    client.setRequestHandler(ListRootsRequestSchema, async () => roots() as never);
  }
  await client.connect(new LegacyTransport(new URL(`${url}/mcp`)));
  return client;
}

/** A v2 client on 2026-07-28; it declares sampling and roots only when it is given answers for them. */
async function modernClient(
  url: string,
  answers: { sample?: (params: SamplingParams) => unknown; roots?: () => unknown } = {},
): Promise<Client> {
  const client = new Client(
    { name: 'aptix-sampling-v2', version: '1.0.0' },
    {
      versionNegotiation: { mode: 'auto' },
      capabilities: {
        ...(answers.sample ? { sampling: {} } : {}),
        ...(answers.roots ? { roots: {} } : {}),
      },
    },
  );
  if (answers.sample) {
    const sample = answers.sample;
    client.setRequestHandler('sampling/createMessage', async (request) => sample(request.params as never) as never);
  }
  if (answers.roots) {
    const roots = answers.roots;
    client.setRequestHandler('roots/list', async () => roots() as never);
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

const textOf = (result: object) =>
  (((result as { content?: unknown }).content as Array<{ text?: string }>) ?? [])
    .map((block) => block.text ?? '')
    .join('\n');

const SAMPLING_UNAVAILABLE =
  "summarise_with_model needs a completion from the client's model (MCP sampling), and this " +
  'caller cannot give one, so nothing was done. Call it from an MCP client that declares the ' +
  'sampling capability.';

describe("a tool asks the client's model and roots on a 2025 session (v1 SDK client)", () => {
  it('sends sampling/createMessage with the parameters the tool gave, and the tool answers with the model text', async () => {
    const asked: SamplingParams[] = [];
    for (const running of [host, isolated]) {
      const client = await legacyClient(running.url, {
        sample: (params) => (asked.push(params), modelAnswer('Aptix hosts tools.')),
      });
      try {
        const result = await client.callTool({ name: 'summarise_with_model', arguments: { text: 'A long text.' } });
        expect(result.isError).toBeFalsy();
        expect(JSON.parse(textOf(result))).toEqual({ summary: 'Aptix hosts tools.' });
      } finally {
        await client.close();
      }
    }
    const expected = {
      messages: [{ role: 'user', content: { type: 'text', text: 'Summarise in one sentence: A long text.' } }],
      maxTokens: 60,
      systemPrompt: 'You summarise texts in one sentence.',
      temperature: 0.2,
    };
    // In process and in a worker alike.
    expect(asked).toEqual([expected, expected]);
  });

  it('sends roots/list, then the model request and the roots request of one round, one after the other, with the state kept', async () => {
    const order: string[] = [];
    const client = await legacyClient(host.url, {
      sample: () => (order.push('sampling'), modelAnswer('1. Edit. 2. Test.')),
      roots: () => (order.push('roots'), { roots: ROOTS }),
    });
    try {
      const roots = await client.callTool({ name: 'list_client_roots', arguments: {} });
      expect(JSON.parse(textOf(roots))).toEqual({ roots: ROOTS });
      const plan = await client.callTool({ name: 'plan_in_roots', arguments: { goal: 'a fix' } });
      expect(JSON.parse(textOf(plan))).toEqual({
        plan: '1. Edit. 2. Test.',
        roots: ROOTS,
        state: { goal: 'a fix' },
      });
      expect(order).toEqual(['roots', 'sampling', 'roots']);
    } finally {
      await client.close();
    }
  });

  it('a client without sampling or roots is sent nothing: the tool fails with SAMPLING_UNAVAILABLE or ROOTS_UNAVAILABLE, saying what to do', async () => {
    let sent = 0;
    // It declares roots only: the tool that needs both is refused before anything is sent.
    const client = await legacyClient(host.url, { roots: () => (sent++, { roots: ROOTS }) });
    try {
      const summary = await client.callTool({ name: 'summarise_with_model', arguments: { text: 'x' } });
      expect(summary.isError).toBe(true);
      expect(textOf(summary)).toBe(SAMPLING_UNAVAILABLE);
      const plan = await client.callTool({ name: 'plan_in_roots', arguments: { goal: 'x' } });
      expect(plan.isError).toBe(true);
      expect(textOf(plan)).toContain('declares the sampling capability');
      expect(sent).toBe(0);
    } finally {
      await client.close();
    }
    const bare = await legacyClient(host.url);
    try {
      const roots = await bare.callTool({ name: 'list_client_roots', arguments: {} });
      expect(roots.isError).toBe(true);
      expect(textOf(roots)).toBe(
        "list_client_roots needs the client's roots (MCP roots/list), and this caller cannot list them, so nothing was done. Call it from an MCP client that declares the roots capability.",
      );
    } finally {
      await bare.close();
    }
  });

  it('a client whose model fails, or answers what is not a sampling result, ends the call with an error; a long roots list is read up to 256', async () => {
    const failing = await legacyClient(host.url, {
      sample: () => {
        throw new Error('the user refused');
      },
    });
    const garbage = await legacyClient(host.url, {
      sample: () => ({ role: 'assistant', content: 'not a content block' }),
      // (The v1 SDK itself refuses a roots answer with a URI that is not file://: the 2026-07-28 test forges one.)
      roots: () => ({ roots: [...ROOTS, ...Array.from({ length: 1000 }, (_, i) => ({ uri: `file:///many/${i}` }))] }),
    });
    try {
      for (const client of [failing, garbage]) {
        const result = await client.callTool({ name: 'summarise_with_model', arguments: { text: 'x' } });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toContain('The MCP client did not answer');
      }
      const roots = JSON.parse(textOf(await garbage.callTool({ name: 'list_client_roots', arguments: {} }))) as {
        roots: Array<{ uri: string }>;
      };
      expect(roots.roots.slice(0, 2)).toEqual(ROOTS);
      expect(roots.roots).toHaveLength(256);
      // The host still serves the session after both.
      expect(
        (await garbage.callTool({ name: 'testing_calculator', arguments: { a: 2, b: 3, operation: 'add' } })).isError,
      ).toBeFalsy();
    } finally {
      await failing.close();
      await garbage.close();
    }
  });
});

describe("a tool asks the client's model and roots on 2026-07-28 (v2 SDK client, input_required)", () => {
  it('the client answers the input_required round from its handlers and retries; the tool gets the model text and the roots', async () => {
    const asked: SamplingParams[] = [];
    for (const running of [host, isolated]) {
      const client = await modernClient(running.url, {
        sample: (params) => (asked.push(params), modelAnswer('Plan: edit, then test.')),
        roots: () => ({ roots: ROOTS }),
      });
      try {
        const summary = await client.callTool({ name: 'summarise_with_model', arguments: { text: 'A text.' } });
        expect(JSON.parse(textOf(summary))).toEqual({ summary: 'Plan: edit, then test.' });
        const plan = await client.callTool({ name: 'plan_in_roots', arguments: { goal: 'a fix' } });
        expect(JSON.parse(textOf(plan))).toEqual({
          plan: 'Plan: edit, then test.',
          roots: ROOTS,
          state: { goal: 'a fix' },
        });
      } finally {
        await client.close();
      }
    }
    expect(asked[0]).toMatchObject({ maxTokens: 60, systemPrompt: 'You summarise texts in one sentence.' });
  });

  it('a request that did not declare sampling gets -32021 naming sampling, with HTTP 400, on the fast lane and the SDK path alike', async () => {
    const call = (capabilities: Record<string, unknown>) =>
      rawToolsCall(host.url, { name: 'summarise_with_model', arguments: { text: 'x' } }, { capabilities });
    // No capability: the fast lane serves it. Elicitation only, or roots only: the SDK's path.
    for (const capabilities of [{}, { elicitation: { form: {} } }, { roots: {} }]) {
      const answer = await call(capabilities);
      expect(answer.status, JSON.stringify(capabilities)).toBe(400);
      expect(answer.id).toBe(1);
      expect(answer.result).toBeUndefined();
      expect(answer.error!.code).toBe(-32021);
      expect(answer.error!.data).toEqual({ requiredCapabilities: { sampling: {} } });
      expect(answer.error!.message).toContain(SAMPLING_UNAVAILABLE);
      expect(answer.error!.message).toContain(
        "Declare sampling in the request's io.modelcontextprotocol/clientCapabilities.",
      );
    }
    // The v2 client surfaces it as an error, and asks nothing.
    const client = await modernClient(host.url, { roots: () => ({ roots: ROOTS }) });
    try {
      await expect(client.callTool({ name: 'plan_in_roots', arguments: { goal: 'x' } })).rejects.toMatchObject({
        code: -32021,
      });
    } finally {
      await client.close();
    }
  });

  it('a retry whose answer is no model text is asked again; forged roots are read only as file:// roots', async () => {
    const first = await rawToolsCall(
      host.url,
      { name: 'summarise_with_model', arguments: { text: 'x' } },
      { capabilities: { sampling: {} } },
    );
    expect(first.result.resultType).toBe('input_required');
    expect(first.result.inputRequests.summary.method).toBe('sampling/createMessage');
    for (const forged of [null, 'Paris', { content: { type: 'image', data: 'AA==', mimeType: 'image/png' } }, []]) {
      const again = await rawToolsCall(
        host.url,
        {
          name: 'summarise_with_model',
          arguments: { text: 'x' },
          inputResponses: { summary: forged },
          requestState: first.result.requestState,
        },
        { capabilities: { sampling: {} } },
      );
      expect(again.result?.resultType ?? again.error?.code, JSON.stringify(forged)).toBe('input_required');
    }
    const roots = await rawToolsCall(
      host.url,
      { name: 'list_client_roots', arguments: {} },
      { capabilities: { roots: {} } },
    );
    const listed = await rawToolsCall(
      host.url,
      {
        name: 'list_client_roots',
        arguments: {},
        inputResponses: { roots: { roots: [{ uri: 'file:///ok' }, { uri: '/etc/passwd' }, { uri: 'javascript:x' }] } },
        requestState: roots.result.requestState,
      },
      { capabilities: { roots: {} } },
    );
    expect(JSON.parse(listed.result.content[0].text)).toEqual({ roots: [{ uri: 'file:///ok' }] });
  });
});

describe('a caller that cannot be asked at all', () => {
  it('the HTTP invoke route answers SAMPLING_UNAVAILABLE and ROOTS_UNAVAILABLE, with no requests in the body', async () => {
    for (const [tool, args, code] of [
      ['summarise_with_model', { text: 'x' }, 'SAMPLING_UNAVAILABLE'],
      ['list_client_roots', {}, 'ROOTS_UNAVAILABLE'],
      ['plan_in_roots', { goal: 'x' }, 'SAMPLING_UNAVAILABLE'],
    ] as const) {
      const response = await fetch(`${host.url}/v1/tools/${tool}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: args }),
      });
      const body = (await response.json()) as { successful: boolean; errors: Array<{ code: string; message: string }> };
      expect(body.successful, tool).toBe(false);
      expect(body.errors.map((error) => error.code)).toEqual(
        tool === 'plan_in_roots' ? ['SAMPLING_UNAVAILABLE', 'ROOTS_UNAVAILABLE'] : [code],
      );
      expect(body).not.toHaveProperty('inputRequired');
    }
  });
});

describe("a prompt asks the client's model before it renders", () => {
  const expected = {
    messages: [{ role: 'user', content: { type: 'text', text: 'Review "Fast lanes": the fast lane' } }],
  };

  it('on a 2025 session (v1 client) and on 2026-07-28 (v2 client): the client is asked, the prompt renders with its answer', async () => {
    const asked: SamplingParams[] = [];
    const sample = (params: SamplingParams) => (asked.push(params), modelAnswer('Fast lanes'));
    const legacy = await legacyClient(host.url, { sample });
    const modern = await modernClient(host.url, { sample });
    try {
      for (const client of [legacy, modern])
        expect(await client.getPrompt({ name: 'titled_review', arguments: { topic: 'the fast lane' } })).toMatchObject(
          expected,
        );
      expect(asked.map((params) => params.messages)).toEqual([
        [{ role: 'user', content: { type: 'text', text: 'A title for: the fast lane' } }],
        [{ role: 'user', content: { type: 'text', text: 'A title for: the fast lane' } }],
      ]);
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it('a client that cannot sample is refused (-32021 on 2026-07-28, an error on 2025, 409 SAMPLING_UNAVAILABLE over HTTP), and a state minted for another prompt is refused', async () => {
    const modern = await modernClient(host.url);
    const legacy = await legacyClient(host.url);
    try {
      await expect(modern.getPrompt({ name: 'titled_review', arguments: { topic: 'x' } })).rejects.toMatchObject({
        code: -32021,
      });
      await expect(legacy.getPrompt({ name: 'titled_review', arguments: { topic: 'x' } })).rejects.toThrow(
        /needs a completion from the client's model/,
      );
    } finally {
      await modern.close();
      await legacy.close();
    }
    const http = await fetch(`${host.url}/v1/prompts/titled_review`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { topic: 'x' } }),
    });
    expect(http.status).toBe(409);
    expect(((await http.json()) as { error: { code: string } }).error.code).toBe('SAMPLING_UNAVAILABLE');
    // A requestState a tool's round minted does not continue the prompt.
    const round = await rawToolsCall(
      host.url,
      { name: 'summarise_with_model', arguments: { text: 'x' } },
      { capabilities: { sampling: {} } },
    );
    const response = await fetch(`${host.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'prompts/get',
        'mcp-name': 'titled_review',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'prompts/get',
        params: {
          name: 'titled_review',
          arguments: { topic: 'x' },
          requestState: round.result.requestState,
          inputResponses: { title: modelAnswer('forged') },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': { sampling: {} },
          },
        },
      }),
    });
    const refused = (await response.json()) as { error?: { code: number; message: string } };
    expect(refused.error?.code).toBe(-32602);
    expect(refused.error?.message).toContain('Invalid requestState');
  });
});

const python = spawnSync('python3', ['-c', 'import mcp'], { encoding: 'utf8' });
describe.skipIf(python.status !== 0)('the Python mcp client answers sampling (a client from another code base)', () => {
  it.each(['modern', 'legacy'])(
    '%s: its sampling callback gets the request and the tool answers with its text',
    (era) => {
      const run = spawnSync(
        'python3',
        [join(HOST_ROOT, 'test', 'clients', 'python_sampling_client.py'), `${host.url}/mcp`, era],
        { encoding: 'utf8', timeout: 60_000 },
      );
      expect(run.status, run.stderr).toBe(0);
      const seen = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
        protocolVersion: string;
        asked: Array<{ maxTokens: number; text: string }>;
        result: string;
        isError: boolean;
      };
      expect(seen.protocolVersion).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
      expect(seen.asked).toEqual([{ maxTokens: 60, text: 'Summarise in one sentence: From Python.' }]);
      expect(seen.isError).toBe(false);
      expect(JSON.parse(seen.result)).toEqual({ summary: 'Python model says hi.' });
    },
  );
});
