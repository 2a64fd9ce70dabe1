/**
 * 3. HTTP: `POST /v1/tools/testing_ping_pong/invoke` on the real host (its own process, LOG_LEVEL=warn, and a
 * second one at LOG_LEVEL=info)
 * against a bare Fastify route answering the same JSON, with autocannon from this process; then MCP
 * `tools/call` over Streamable HTTP, Aptix's endpoint against the SDK's own stateless transport.
 * Also reads the host's RSS (section 5) while it runs.
 */
import { join } from 'node:path';
import autocannon, { type Options, type Result } from 'autocannon';
import { median } from '../harness.js';
import { APTIX_BIN, BARE_SERVER, WORKSPACE_ROOT } from '../paths.js';
import { cpuMicros, freePort, portLine, rssMiB, startServer, type Server } from '../processes.js';
import type { Row } from '../report.js';

const SECTION = '3. HTTP (autocannon, 10 connections, same machine)';
const CONNECTIONS = 10;

export interface HttpOptions {
  /** Seconds per measured round. */
  readonly seconds: number;
  readonly rounds: number;
}

export interface Load {
  readonly rps: number;
  readonly p99: number;
  /** CPU time (user + system, all threads) the server process spent per request, in µs, when it could be read. */
  readonly cpuUs?: number;
}

/** The invoke route's body and its answer, byte for byte (section 3b loads the same route). */
export const INVOKE_BODY = JSON.stringify({ arguments: { message: 'hello', count: 2 } });
export const EXPECTED =
  '{"successful":true,"result":{"reply":"pong pong: hello","count":2,"sessionId":null,"conversationId":null},"errors":[]}';

/** One autocannon run; its p99 from every response's own latency (autocannon's histogram keeps whole milliseconds). */
async function fire(options: Options): Promise<{ result: Result; p99: number }> {
  const latencies: number[] = [];
  const instance = autocannon({ connections: CONNECTIONS, pipelining: 1, ...options });
  instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await instance;
  const failed = result.errors + result.timeouts + result.non2xx;
  if (failed > 0)
    throw new Error(
      `${options.url}: ${result.errors} errors, ${result.timeouts} time-outs, ${result.non2xx} non-2xx answers ${JSON.stringify(result.statusCodeStats)}`,
    );
  latencies.sort((a, b) => a - b);
  return { result, p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN };
}

/** Warms every target up, then measures them in alternating rounds; the median round of each. */
export async function alternate(
  targets: ReadonlyArray<{ name: string; options: Options; pid?: number }>,
  { seconds, rounds }: HttpOptions,
  log: (line: string) => void,
): Promise<Load[]> {
  for (const target of targets) await fire({ ...target.options, duration: 1 });
  const samples = targets.map(() => [] as Load[]);
  for (let round = 0; round < rounds; round++) {
    for (const [i, target] of targets.entries()) {
      const before = cpuMicros(target.pid);
      const { result, p99 } = await fire({ ...target.options, duration: seconds });
      const after = cpuMicros(target.pid);
      const cpuUs = before === undefined || after === undefined ? undefined : (after - before) / result.requests.total;
      samples[i]!.push({
        rps: result.requests.total / result.duration,
        p99,
        ...(cpuUs === undefined ? {} : { cpuUs }),
      });
      log(
        `    ${target.name}: ${Math.round(result.requests.total / result.duration)} req/s, p99 ${p99.toFixed(2)} ms${cpuUs === undefined ? '' : `, ${cpuUs.toFixed(1)} µs CPU per request`}`,
      );
    }
  }
  return samples.map((s) => {
    const cpu = s.flatMap((x) => (x.cpuUs === undefined ? [] : [x.cpuUs]));
    return {
      rps: median(s.map((x) => x.rps)),
      p99: median(s.map((x) => x.p99)),
      ...(cpu.length === s.length ? { cpuUs: median(cpu) } : {}),
    };
  });
}

async function json(url: string, init: RequestInit): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url, init);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Opens an MCP session on Aptix's /mcp, in an agent session whose mode offers ping-pong. */
async function openAptixMcp(url: string, protocolVersion = '2025-06-18'): Promise<Record<string, string>> {
  const created = await json(`${url}/v1/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode: 'tool_diagnostics' }),
  });
  const agentSessionId = (JSON.parse(created.text) as { id: string }).id;
  const init = await json(`${url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'x-aptix-session-id': agentSessionId },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'aptix-bench', version: '0.0.0' } },
    }),
  });
  const sessionId = init.headers.get('mcp-session-id');
  const data = /^data: (.+)$/m.exec(init.text)?.[1];
  if (init.status !== 200 || sessionId === null || data === undefined)
    throw new Error(`MCP initialize failed: ${init.status} ${init.text}`);
  const negotiated = (JSON.parse(data) as { result: { protocolVersion: string } }).result.protocolVersion;
  if (negotiated !== protocolVersion)
    throw new Error(`MCP initialize negotiated ${negotiated}, not ${protocolVersion}`);
  const headers = { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': negotiated };
  const initialized = await json(`${url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  if (initialized.status !== 202) throw new Error(`MCP notifications/initialized answered ${initialized.status}`);
  return headers;
}

/**
 * A 2026-07-28 client that accepts only JSON: the per-request envelope and the standard headers, no
 * session; the mode's own endpoint offers ping-pong.
 */
const MODERN_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'testing_ping_pong',
};
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'aptix-bench', version: '0.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The call every MCP row makes: ping-pong, directly or (issue 31's stable surface) through aptix_call_tool. */
interface ToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}
const PING: ToolCall = { name: 'testing_ping_pong', arguments: { message: 'hello', count: 2 } };
const throughPair = (sessionId: string): ToolCall => ({
  name: 'aptix_call_tool',
  arguments: { sessionId, name: PING.name, arguments: PING.arguments },
});

/** tools/call requests with a fresh JSON-RPC id each, so calls in flight on one MCP session never collide. */
function toolCalls(
  url: string,
  headers: Record<string, string>,
  path = '/mcp',
  meta?: Record<string, unknown>,
  call: ToolCall = PING,
): Options {
  let id = 1;
  return {
    url: `${url}${path}`,
    method: 'POST',
    headers,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: id++,
            method: 'tools/call',
            params: { ...call, ...(meta === undefined ? {} : { _meta: meta }) },
          }),
        }),
      },
    ],
  };
}

/** One call answers the expected pong in the expected media type before the load starts. */
async function checkMcp(
  url: string,
  headers: Record<string, string>,
  type = 'text/event-stream',
  path = '/mcp',
  meta?: Record<string, unknown>,
  call: ToolCall = PING,
): Promise<void> {
  const answer = await json(`${url}${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'check',
      method: 'tools/call',
      params: { ...call, ...(meta === undefined ? {} : { _meta: meta }) },
    }),
  });
  const got = answer.headers.get('content-type') ?? '';
  if (answer.status !== 200 || !answer.text.includes('pong pong: hello') || !got.startsWith(type))
    throw new Error(`MCP tools/call on ${url}${path} answered ${answer.status} ${got}: ${answer.text}`);
  // A 2025-11-25 answer is a resumable stream: it opens with a priming event.
  if (headers['mcp-protocol-version'] === '2025-11-25' && !/^id: \S+\.0\nretry: \d+\n/.test(answer.text))
    throw new Error(`MCP tools/call at 2025-11-25 answered without a priming event: ${answer.text}`);
}

/** A host's invoke throughput and p99 against the bare route's, with the goals of issue 18. */
function invokeRows(
  measure: string,
  p99Measure: string,
  load: Load,
  bare: Load,
  p99Note?: string,
  note?: string,
): Row[] {
  return [
    {
      section: SECTION,
      measure,
      figure: load.rps,
      unit: 'req/s',
      baseline: { name: 'bare', figure: bare.rps },
      goal: { kind: 'ratio-at-least', value: 0.85 },
      ...(note ? { note } : {}),
    },
    {
      section: SECTION,
      measure: p99Measure,
      figure: load.p99,
      unit: 'ms',
      baseline: { name: 'bare', figure: bare.p99 },
      goal: { kind: 'ratio-at-most', value: 1.2 },
      ...(p99Note ? { note: p99Note } : {}),
    },
  ];
}

/**
 * The server process's CPU time per request (all its threads), against the bare route's: steadier than
 * requests per second on a shared machine, where a round's rate depends on what else runs. No goal of
 * its own; it says how much of a throughput ratio is the host's work and how much the machine's.
 */
function cpuRows(host: Load, info: Load, bare: Load): Row[] {
  if (host.cpuUs === undefined || info.cpuUs === undefined || bare.cpuUs === undefined) return [];
  const note = (load: Load) =>
    `µs of CPU per request (user + system, all threads of the server process, from /proc), ` +
    `median of the rounds; bare ${bare.cpuUs!.toFixed(1)} µs, so the host does ` +
    `${(load.cpuUs! - bare.cpuUs!).toFixed(1)} µs more per request.`;
  return [
    {
      section: SECTION,
      measure: '… CPU per request of the host process',
      figure: host.cpuUs,
      unit: 'µs',
      baseline: { name: 'bare', figure: bare.cpuUs },
      note: note(host),
    },
    {
      section: SECTION,
      measure: '… CPU per request at LOG_LEVEL=info',
      figure: info.cpuUs,
      unit: 'µs',
      baseline: { name: 'bare', figure: bare.cpuUs },
      note: note(info),
    },
  ];
}

/** An MCP row against the bare invoke route of the same rounds; `goal` adds issue 18's 0.5× goal. */
function mcpRow(measure: string, load: Load, bare: Load, note: string, goal = true): Row {
  return {
    section: SECTION,
    measure,
    figure: load.rps,
    unit: 'req/s',
    baseline: { name: 'bare invoke', figure: bare.rps },
    ...(goal ? { goal: { kind: 'ratio-at-least', value: 0.5 } as const } : {}),
    note: `p99 ${load.p99.toFixed(2)} ms${cpuNote(load, bare)}. ${note}`,
  };
}

/** The server's CPU per request beside the bare route's, when both could be read: what the ratio costs in work, whatever the load did to wall time. */
function cpuNote(load: Load, bare: Load): string {
  return load.cpuUs === undefined || bare.cpuUs === undefined
    ? ''
    : `; server CPU per request ${load.cpuUs.toFixed(1)} µs (bare invoke ${bare.cpuUs.toFixed(1)} µs)`;
}

export interface HttpFigures {
  readonly rows: Row[];
  /** RSS of the host (first-party tools) after the load. */
  readonly hostRss: { readonly loaded: number | undefined };
}

export async function httpSection(
  options: HttpOptions,
  log: (line: string) => void,
  dbDir: string,
): Promise<HttpFigures> {
  const port = await freePort();
  const servers: Server[] = [];
  try {
    const bare = await startServer([BARE_SERVER], { ready: portLine, cwd: WORKSPACE_ROOT });
    servers.push(bare);
    const host = await startServer([APTIX_BIN, 'serve', '--port', String(port)], {
      port,
      cwd: dbDir,
      env: { LOG_LEVEL: 'warn', APTIX_DB: `sqlite:${dbDir}/http.db` },
    });
    servers.push(host);
    // The same host logging at info, as a production host would: every request's lines go to a file.
    const infoPort = await freePort();
    const infoLog = join(dbDir, 'info-host.log');
    const infoHost = await startServer([APTIX_BIN, 'serve', '--port', String(infoPort)], {
      port: infoPort,
      cwd: dbDir,
      logFile: infoLog,
      env: { LOG_LEVEL: 'info', APTIX_DB: `sqlite:${dbDir}/http-info.db` },
    });
    servers.push(infoHost);

    // Both answer the same bytes before they are compared.
    const invoke = { method: 'POST', headers: { 'content-type': 'application/json' }, body: INVOKE_BODY };
    for (const [name, url] of [
      ['bare', `${bare.url}/invoke`],
      ['host', `${host.url}/v1/tools/testing_ping_pong/invoke`],
      ['host at info', `${infoHost.url}/v1/tools/testing_ping_pong/invoke`],
    ] as const) {
      const answer = await json(url, invoke);
      if (answer.text !== EXPECTED) throw new Error(`${name} answered ${answer.status} ${answer.text}`);
    }

    log('  http: invoke');
    const [bareLoad, hostLoad, infoLoad] = await alternate(
      [
        { name: 'bare Fastify', options: { url: `${bare.url}/invoke`, ...invoke }, pid: bare.child.pid },
        {
          name: 'Aptix host',
          options: { url: `${host.url}/v1/tools/testing_ping_pong/invoke`, ...invoke },
          pid: host.child.pid,
        },
        {
          name: 'Aptix host, LOG_LEVEL=info',
          options: { url: `${infoHost.url}/v1/tools/testing_ping_pong/invoke`, ...invoke },
          pid: infoHost.child.pid,
        },
      ],
      options,
      log,
    );

    log('  http: MCP tools/call');
    const aptixMcp = await openAptixMcp(host.url);
    const resumableMcp = await openAptixMcp(host.url, '2025-11-25');
    const modernPath = '/mcp/modes/tool_diagnostics';
    await checkMcp(host.url, aptixMcp);
    await checkMcp(host.url, resumableMcp);
    await checkMcp(host.url, MODERN_HEADERS, 'application/json', modernPath, MODERN_META);
    await checkMcp(bare.url, MCP_HEADERS);
    // The bare invoke route runs again beside them, so each MCP ratio has a baseline from the same rounds.
    const [bareAgain, sdkMcp, hostMcp, resumableHostMcp, modernMcp] = await alternate(
      [
        { name: 'bare Fastify (again)', options: { url: `${bare.url}/invoke`, ...invoke }, pid: bare.child.pid },
        { name: 'MCP SDK stateless transport', options: toolCalls(bare.url, MCP_HEADERS) },
        { name: "Aptix's /mcp, 2025 session (SSE)", options: toolCalls(host.url, aptixMcp), pid: host.child.pid },
        {
          name: "Aptix's /mcp, 2025-11-25 session (resumable SSE)",
          options: toolCalls(host.url, resumableMcp),
          pid: host.child.pid,
        },
        {
          name: "Aptix's /mcp, 2026-07-28 (JSON)",
          options: toolCalls(host.url, MODERN_HEADERS, modernPath, MODERN_META),
          pid: host.child.pid,
        },
      ],
      options,
      log,
    );

    log('  http: MCP, a call through aptix_call_tool against the same call made directly');
    // Both in one agent session whose mode offers ping-pong: directly at the mode's URL with the session's
    // header, as a client that pins the mode does; through the pair at /mcp with the session's id as an
    // argument, as a framework that knows only /mcp does after agent_change_mode (docs/mcp.md).
    const agentSession = (
      JSON.parse(
        (
          await json(`${host.url}/v1/sessions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ mode: 'tool_diagnostics' }),
          })
        ).text,
      ) as { id: string }
    ).id;
    const directHeaders = { ...MODERN_HEADERS, 'x-aptix-session-id': agentSession };
    const pairHeaders = { ...MODERN_HEADERS, 'mcp-name': 'aptix_call_tool' };
    await checkMcp(host.url, directHeaders, 'application/json', '/modes/tool_diagnostics/mcp', MODERN_META);
    await checkMcp(host.url, pairHeaders, 'application/json', '/mcp', MODERN_META, throughPair(agentSession));
    const [directMcp, pairMcp] = await alternate(
      [
        {
          name: 'tools/call of ping-pong in a session, at its mode URL',
          options: toolCalls(host.url, directHeaders, '/modes/tool_diagnostics/mcp', MODERN_META),
          pid: host.child.pid,
        },
        {
          name: 'the same through aptix_call_tool at /mcp',
          options: toolCalls(host.url, pairHeaders, '/mcp', MODERN_META, throughPair(agentSession)),
          pid: host.child.pid,
        },
      ],
      options,
      log,
    );
    const hostLoaded = rssMiB(host.child.pid);

    const rows: Row[] = [
      {
        section: SECTION,
        measure: 'bare Fastify route, same JSON',
        figure: bareLoad!.rps,
        unit: 'req/s',
        note: `p99 ${bareLoad!.p99.toFixed(2)} ms.`,
      },
      ...invokeRows(
        'POST /v1/tools/testing_ping_pong/invoke',
        '… its p99 latency',
        hostLoad!,
        bareLoad!,
        'Measured from every response (autocannon keeps whole milliseconds only), median of the rounds.',
      ),
      ...invokeRows(
        '… the same at LOG_LEVEL=info',
        '… its p99 latency at LOG_LEVEL=info',
        infoLoad!,
        bareLoad!,
        undefined,
        `One access line per request, written to a file; ` +
          `${(infoLoad!.rps / hostLoad!.rps).toFixed(2)}× the host at warn, so info costs ` +
          `${(1e6 / infoLoad!.rps - 1e6 / hostLoad!.rps).toFixed(1)} µs of a request at this rate.`,
      ),
      ...cpuRows(hostLoad!, infoLoad!, bareLoad!),
      mcpRow(
        'MCP tools/call, the SDK stateless transport on Fastify',
        sdkMcp!,
        bareAgain!,
        'A server and a transport per request, as the SDK documents its stateless mode.',
        false,
      ),
      mcpRow(
        "MCP tools/call, Aptix's /mcp, a 2025 session, SSE answer",
        hostMcp!,
        bareAgain!,
        `${(hostMcp!.rps / sdkMcp!.rps).toFixed(1)}× the SDK's stateless transport. A client ` +
          `accepting JSON and SSE (2025-06-18, as 2025 clients must); the answer is an event stream. ` +
          `Each call reads the agent session from SQLite (its mode decides the tools). Served by the ` +
          `fast lane (docs/mcp.md); floor 0.3×.`,
      ),
      mcpRow(
        "MCP tools/call, Aptix's /mcp, a 2025-11-25 session, resumable SSE answer",
        resumableHostMcp!,
        bareAgain!,
        "The same at 2025-11-25, the v1 SDK client's default revision: the answer is a resumable " +
          'stream (a priming event, ids on every event; docs/mcp.md), which the fast lane writes ' +
          'itself. Floor 0.3×.',
      ),
      mcpRow(
        "MCP tools/call, Aptix's /mcp/modes/<mode>, 2026-07-28, JSON answer",
        modernMcp!,
        bareAgain!,
        'A stateless client accepting only application/json, the per-request envelope and Mcp-Method/Mcp-Name headers, no agent session. Served by the fast lane; floor 0.3×.',
      ),
      {
        section: SECTION,
        measure: 'MCP tools/call through aptix_call_tool at /mcp, 2026-07-28, in an agent session',
        figure: pairMcp!.rps,
        unit: 'req/s',
        baseline: { name: 'direct tools/call', figure: directMcp!.rps },
        goal: { kind: 'ratio-at-least', value: 0.9 },
        note:
          `p99 ${pairMcp!.p99.toFixed(2)} ` +
          `ms${cpuNote(pairMcp!, directMcp!).replace('bare invoke', 'direct')}. Issue 31's stable ` +
          `surface: ping-pong named in aptix_call_tool's arguments with the agent session's id, ` +
          `against the same call made directly at /modes/tool_diagnostics/mcp with the ` +
          `X-Aptix-Session-Id header; both read the session's mode from SQLite and go through the fast lane.`,
      },
    ];
    return { rows, hostRss: { loaded: hostLoaded } };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}
