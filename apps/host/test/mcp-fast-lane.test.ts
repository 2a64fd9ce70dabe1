import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_ROOT, type scratch, startHostWithConfig, type RunningHost } from './support.js';

/**
 * The HTTP fast lane (src/mcp/fast-lane.ts) against the SDK path, request by request: one host serves
 * plain tools/call and tools/list through the fast lane, the other (APTIX_MCP_FAST_LANE=off) sends
 * everything through the SDK. Every request, well-formed or hostile, must get the same answer from both.
 */

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'diff', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly messages: unknown[];
  /** The event ids after the stream's id (a resumable stream: the priming event's 0, then 1, 2…), or none. */
  readonly positions: string[];
}

/** The answer as a client reads it: status, media type, and the JSON-RPC messages (SSE events or one JSON body), ids of sessions masked. */
async function post(url: string, headers: Record<string, string>, body: string): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers, body });
  // Session ids differ between the hosts, and a delay tool's measured time between runs.
  const text = (await response.text()).replace(UUID, '<uuid>').replace(/\\"elapsedMs\\":\d+/g, '\\"elapsedMs\\":0');
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const messages =
    type === 'text/event-stream'
      ? text
          .split('\n')
          // A resumable stream (2025-11-25) starts with a priming event without data.
          .filter((line) => line.startsWith('data: ') && line.length > 6)
          .map((line) => JSON.parse(line.slice(6)) as unknown)
      : text === ''
        ? []
        : [JSON.parse(text) as unknown];
  const positions = [...text.matchAll(/^id: [0-9a-f]{32}\.(\d+)$/gm)].map((match) => match[1]!);
  return { status: response.status, type, messages, positions };
}

const modernHeaders = (method: string, name?: string): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(name === undefined ? {} : { 'mcp-name': name }),
});

const call = (
  name: unknown,
  args: unknown,
  extra: Record<string, unknown> = {},
  meta: Record<string, unknown> = MODERN_META,
) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name, arguments: args, _meta: meta, ...extra },
  });

/** Requests to the 2026-07-28 endpoint: [what, path, headers, body]. */
const MODERN_CASES: ReadonlyArray<readonly [string, string, Record<string, string>, string]> = [
  [
    'tools/list',
    '/mcp',
    modernHeaders('tools/list'),
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: MODERN_META } }),
  ],
  [
    'tools/list of another mode',
    '/mcp/modes/tool_diagnostics',
    modernHeaders('tools/list'),
    JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'tools/list', params: { _meta: MODERN_META } }),
  ],
  [
    'a call',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', { operation: 'add', a: 2, b: 3 }),
  ],
  [
    'a call with a string id',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', { operation: 'add', a: 2, b: 3 }).replace('"id":7', '"id":"x-1"'),
  ],
  [
    'a call with arguments the tool refuses',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', { operation: 'pow', a: 'two' }),
  ],
  ['an unknown tool', '/mcp', modernHeaders('tools/call', 'no_such_tool'), call('no_such_tool', {})],
  [
    'a tool outside the mode',
    '/mcp',
    modernHeaders('tools/call', 'testing_delay'),
    call('testing_delay', { milliseconds: 1 }),
  ],
  [
    'a call in a mode endpoint',
    '/mcp/modes/tool_diagnostics',
    modernHeaders('tools/call', 'testing_ping_pong'),
    call('testing_ping_pong', { message: 'hi', count: 2 }),
  ],
  ['content blocks', '/mcp', modernHeaders('tools/call', 'content_chart'), call('content_chart', { kind: 'chart' })],
  [
    'structured output',
    '/mcp',
    modernHeaders('tools/call', 'content_stats'),
    call('content_stats', { values: [1, 2, 6] }),
  ],
  [
    'a result that breaks its output schema',
    '/mcp',
    modernHeaders('tools/call', 'content_stats'),
    call('content_stats', { values: [1], lie: true }),
  ],
  [
    'a content block with bad base64',
    '/mcp',
    modernHeaders('tools/call', 'content_chart'),
    call('content_chart', { kind: 'bad_base64' }),
  ],
  [
    'a call without arguments',
    '/mcp',
    modernHeaders('tools/call', 'agent_hello_world'),
    JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'agent_hello_world', _meta: MODERN_META },
    }),
  ],
  // Hostile or odd requests: the fast lane must leave each to the SDK, so the answers match.
  [
    'Mcp-Name naming another tool',
    '/mcp',
    modernHeaders('tools/call', 'agent_hello_world'),
    call('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'no Mcp-Method header',
    '/mcp',
    { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2026-07-28' },
    call('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'no MCP-Protocol-Version header',
    '/mcp',
    {
      'content-type': 'application/json',
      accept: 'application/json',
      'mcp-method': 'tools/call',
      'mcp-name': 'testing_calculator',
    },
    call('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'a header naming another revision',
    '/mcp',
    { ...modernHeaders('tools/call', 'testing_calculator'), 'mcp-protocol-version': '2025-11-25' },
    call('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'an envelope without clientInfo',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call(
      'testing_calculator',
      { operation: 'add', a: 1, b: 1 },
      {},
      { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
    ),
  ],
  [
    'an envelope with a bad clientInfo',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call(
      'testing_calculator',
      { operation: 'add', a: 1, b: 1 },
      {},
      { ...MODERN_META, 'io.modelcontextprotocol/clientInfo': { name: 7 } },
    ),
  ],
  [
    'an envelope naming a future revision',
    '/mcp',
    { ...modernHeaders('tools/call', 'testing_calculator'), 'mcp-protocol-version': '2027-01-01' },
    call(
      'testing_calculator',
      { operation: 'add', a: 1, b: 1 },
      {},
      { ...MODERN_META, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' },
    ),
  ],
  ['a tool name that is a number', '/mcp', modernHeaders('tools/call', '7'), call(7, {})],
  [
    'arguments that are an array',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', [1, 2]),
  ],
  [
    'an unknown params field',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', { operation: 'add', a: 1, b: 1 }, { task: { ttl: 10 } }),
  ],
  [
    'an unknown top-level field',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'testing_calculator', arguments: {}, _meta: MODERN_META },
      extra: true,
    }),
  ],
  [
    'jsonrpc 1.0',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', {}).replace('"2.0"', '"1.0"'),
  ],
  [
    'a null id',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', {}).replace('"id":7', '"id":null'),
  ],
  [
    'a fractional id',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', { operation: 'add', a: 1, b: 1 }).replace('"id":7', '"id":7.5'),
  ],
  [
    'no id (a notification)',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', { operation: 'add', a: 1, b: 1 }).replace('"id":7,', ''),
  ],
  [
    'a progress token that is an object',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', { operation: 'add', a: 1, b: 1 }, {}, { ...MODERN_META, progressToken: {} }),
  ],
  [
    'a bad envelope a second time (its verdict is kept)',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call(
      'testing_calculator',
      { operation: 'add', a: 1, b: 1 },
      {},
      { ...MODERN_META, 'io.modelcontextprotocol/clientInfo': { name: 7 } },
    ),
  ],
  [
    'a valid envelope after a bad one',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call('testing_calculator', { operation: 'add', a: 2, b: 2 }),
  ],
  [
    'a log level the revision does not know',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    call(
      'testing_calculator',
      { operation: 'add', a: 1, b: 1 },
      {},
      { ...MODERN_META, 'io.modelcontextprotocol/logLevel': 'loud' },
    ),
  ],
  [
    'a text/plain body',
    '/mcp',
    { ...modernHeaders('tools/call', 'testing_calculator'), 'content-type': 'text/plain' },
    call('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'a batch',
    '/mcp',
    modernHeaders('tools/call', 'testing_calculator'),
    `[${call('testing_calculator', { operation: 'add', a: 1, b: 1 })}]`,
  ],
];

async function initialize(url: string, protocolVersion = '2025-06-18'): Promise<Record<string, string>> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'diff', version: '1' } },
    }),
  });
  await init.text();
  const session = {
    ...headers,
    'mcp-session-id': init.headers.get('mcp-session-id')!,
    'mcp-protocol-version': protocolVersion,
  };
  await (
    await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).text();
  return session;
}

const legacyCall = (name: unknown, args: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name, arguments: args, ...extra } });

/** Requests in a 2025 session: [what, extra headers, body]. */
const LEGACY_CASES: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
  ['tools/list', {}, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })],
  ['tools/list with empty params', {}, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })],
  ['a call', {}, legacyCall('testing_calculator', { operation: 'add', a: 2, b: 3 })],
  ['an unknown tool', {}, legacyCall('no_such_tool', {})],
  ['a tool outside the mode', {}, legacyCall('testing_delay', { milliseconds: 1 })],
  ['arguments the tool refuses', {}, legacyCall('testing_calculator', { operation: 'add', a: 'x' })],
  ['content blocks', {}, legacyCall('content_chart', { kind: 'chart' })],
  ['structured output', {}, legacyCall('content_stats', { values: [1, 2, 6] })],
  ['a result that breaks its output schema', {}, legacyCall('content_stats', { values: [1], lie: true })],
  [
    'no protocol version header',
    { 'mcp-protocol-version': '' },
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'an unsupported protocol version header',
    { 'mcp-protocol-version': '1999-01-01' },
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'Accept without text/event-stream',
    { accept: 'application/json' },
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'a 2025-11-25 request (a resumable stream)',
    { 'mcp-protocol-version': '2025-11-25' },
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'a 2025-06-18 request',
    { 'mcp-protocol-version': '2025-06-18' },
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'a 2026-07-28 header in a session',
    { 'mcp-protocol-version': '2026-07-28' },
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }),
  ],
  [
    'an envelope claim in a session',
    {},
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }, { _meta: MODERN_META }),
  ],
  [
    'an unknown _meta key',
    {},
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }, { _meta: { 'x/y': 1 } }),
  ],
  ['a name that is an object', {}, legacyCall({ n: 1 }, {})],
  ['an unknown params field', {}, legacyCall('testing_calculator', {}, { cursor: 'x' })],
  // Not JSON-RPC requests: the SDK refuses each, and the tool must not run.
  [
    'an id that is an object',
    {},
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }).replace('"id":9', '"id":{}'),
  ],
  [
    'a fractional id',
    {},
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }).replace('"id":9', '"id":1.5'),
  ],
  ['jsonrpc 1.0', {}, legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }).replace('"2.0"', '"1.0"')],
  [
    'no id (a notification)',
    {},
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }).replace('"id":9,', ''),
  ],
  [
    'a string id',
    {},
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }).replace('"id":9', '"id":"nine"'),
  ],
  [
    'an integer id past 2^53',
    {},
    legacyCall('testing_calculator', { operation: 'add', a: 1, b: 1 }).replace('"id":9', '"id":90071992547409930'),
  ],
];

describe('the MCP HTTP fast lane answers exactly as the SDK does', () => {
  // Both load the content fixtures too: content blocks, an output schema, structured content.
  const packages = [
    '@aptix/tool-samples',
    '@aptix/tool-mode-catalog',
    '@aptix/tool-mode-change',
    join(HOST_ROOT, 'test', 'fixtures', 'content-tools'),
  ];
  const started: Array<{ host: RunningHost; space: ReturnType<typeof scratch> }> = [];
  const fast = { url: '' };
  const sdk = { url: '' };
  beforeAll(async () => {
    started.push(
      await startHostWithConfig({ toolPackages: packages }),
      await startHostWithConfig({ toolPackages: packages }, { APTIX_MCP_FAST_LANE: 'off' }),
    );
    fast.url = started[0]!.host.url;
    sdk.url = started[1]!.host.url;
  });
  afterAll(async () => {
    for (const { host, space } of started) {
      await host.stop();
      space.cleanup();
    }
  });

  it('on 2026-07-28, for plain calls, lists, tool errors and every malformed request', async () => {
    for (const [what, path, headers, body] of MODERN_CASES) {
      const [a, b] = [await post(`${fast.url}${path}`, headers, body), await post(`${sdk.url}${path}`, headers, body)];
      expect({ what, ...a }).toEqual({ what, ...b });
    }
  });

  it.each(['2025-06-18', '2025-11-25'])(
    'in a %s session, for plain calls, lists, tool errors and every malformed request',
    async (version) => {
      // 2025-11-25: answers are resumable streams (a priming event, then an id on every event) on both paths.
      const [fastSession, sdkSession] = [await initialize(fast.url, version), await initialize(sdk.url, version)];
      for (const [what, extra, body] of LEGACY_CASES) {
        const headers = (session: Record<string, string>) =>
          Object.fromEntries(Object.entries({ ...session, ...extra }).filter(([, value]) => value !== ''));
        const [a, b] = [
          await post(`${fast.url}/mcp`, headers(fastSession), body),
          await post(`${sdk.url}/mcp`, headers(sdkSession), body),
        ];
        expect({ what, ...a }).toEqual({ what, ...b });
      }
    },
  );

  it('refuses arguments with a __proto__ key, naming it (the SDK path instead drops the key and reports the fields as missing)', async () => {
    const body = call('testing_calculator', {}).replace('"arguments":{}', '"arguments":{"__proto__":{"a":1}}');
    const answer = await post(`${fast.url}/mcp`, modernHeaders('tools/call', 'testing_calculator'), body);
    expect(answer.status).toBe(200);
    expect(answer.messages[0]).toMatchObject({
      id: 7,
      result: { isError: true, content: [{ text: expect.stringContaining('forbidden key (__proto__') }] },
    });
  });

  it("answers every call of a 2025 session with the SDK path's response headers, naming the session's agent session", async () => {
    const calls = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'testing_calculator', arguments: { operation: 'add', a: 2, b: 3 } },
    });
    const seen = await Promise.all(
      [fast, sdk].map(async (host) => {
        const created = (await (
          await fetch(`${host.url}/v1/sessions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ mode: 'tool_diagnostics' }),
          })
        ).json()) as { id: string };
        const base = {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-aptix-session-id': created.id,
        };
        const answers: Array<Record<string, string | null>> = [];
        for (const revision of ['2025-06-18', '2025-11-25']) {
          const init = await fetch(`${host.url}/mcp`, {
            method: 'POST',
            headers: base,
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 0,
              method: 'initialize',
              params: { protocolVersion: revision, capabilities: {}, clientInfo: { name: 'diff', version: '1' } },
            }),
          });
          await init.text();
          const headers = {
            ...base,
            'mcp-session-id': init.headers.get('mcp-session-id')!,
            'mcp-protocol-version': revision,
          };
          // Twice: the second answer of a session reuses what the first one made.
          for (let i = 0; i < 2; i++) {
            const response = await fetch(`${host.url}/mcp`, { method: 'POST', headers, body: calls });
            expect(await response.text()).toContain('2 + 3 = 5');
            const agent = response.headers.get('x-aptix-session-id');
            answers.push({
              type: response.headers.get('content-type'),
              cache: response.headers.get('cache-control'),
              buffering: response.headers.get('x-accel-buffering'),
              agent: agent === created.id ? 'the bound one' : agent,
            });
          }
        }
        return answers;
      }),
    );
    expect(seen[0]).toEqual(seen[1]);
    expect(seen[0]).toHaveLength(4);
    for (const answer of seen[0]!) expect(answer).toMatchObject({ type: 'text/event-stream', agent: 'the bound one' });
  });

  it('streams progress as SSE before the answer, on both revisions, as the SDK does', async () => {
    const progressCall = (meta: Record<string, unknown>) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'testing_delay', arguments: { milliseconds: 150 }, _meta: { progressToken: 'p1', ...meta } },
      });
    const shape = (answer: Answer) => ({
      status: answer.status,
      type: answer.type,
      first: answer.messages[0],
      last: answer.messages.at(-1),
      allProgress: answer.messages
        .slice(0, -1)
        .every((m) => (m as { method?: string }).method === 'notifications/progress'),
    });
    const modern = [fast, sdk].map((host) =>
      post(
        `${host.url}/mcp/modes/tool_diagnostics`,
        modernHeaders('tools/call', 'testing_delay'),
        progressCall(MODERN_META),
      ),
    );
    const [a, b] = await Promise.all(modern);
    expect(a.type).toBe('text/event-stream');
    expect(a.messages.length).toBeGreaterThan(2);
    expect(shape(a)).toEqual(shape(b));

    const sessions = await Promise.all(
      [fast, sdk].map(async (host) => {
        const created = (await (
          await fetch(`${host.url}/v1/sessions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ mode: 'tool_diagnostics' }),
          })
        ).json()) as { id: string };
        const headers = {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-aptix-session-id': created.id,
        };
        const init = await fetch(`${host.url}/mcp`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'diff', version: '1' } },
          }),
        });
        await init.text();
        return {
          ...headers,
          'mcp-session-id': init.headers.get('mcp-session-id')!,
          'mcp-protocol-version': '2025-06-18',
        };
      }),
    );
    const [c, d] = await Promise.all(
      [fast, sdk].map((host, i) => post(`${host.url}/mcp`, sessions[i]!, progressCall({}))),
    );
    expect(c.messages.length).toBeGreaterThan(2);
    expect(shape(c)).toEqual(shape(d));
    // 2025-11-25: the same, as a resumable stream whose events are numbered in order.
    const resumable = sessions.map((session) => ({ ...session, 'mcp-protocol-version': '2025-11-25' }));
    const [e, f] = await Promise.all(
      [fast, sdk].map((host, i) => post(`${host.url}/mcp`, resumable[i]!, progressCall({}))),
    );
    expect(e.messages.length).toBeGreaterThan(2);
    expect(shape(e)).toEqual(shape(f));
    for (const answer of [e, f]) expect(answer.positions).toEqual(answer.positions.map((_, index) => String(index)));
  });
});
