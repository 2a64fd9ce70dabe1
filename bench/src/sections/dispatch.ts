/**
 * 1. In-process dispatch: `AgentToolExecutor.execute` on `testing_ping_pong` against the bare
 * baseline (JSON.parse, the same function, JSON.stringify), the MCP SDK's in-memory `callTool` and
 * LangChain's `tool().invoke`; then each per-call overhead on its own, and where a call's time goes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { tool as langchainTool } from '@langchain/core/tools';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpServer } from '@aptix/host';
import {
  AgentToolExecutor,
  AgentToolRegistry,
  decodeArguments,
  silentAdminLogger,
  type JsonSchema,
} from '@aptix/tool-contract';
import { PingPongTool } from '@aptix/tool-samples';
import { z } from 'zod';
import { awilix, pg } from '../host-deps.js';
import {
  AsyncPingPongTool,
  composeBenchHost,
  CONTEXT,
  PING_ARGS,
  PING_JSON,
  pong,
  SignalPingPongTool,
} from '../fixtures.js';
import { compare, type Subject } from '../harness.js';
import type { Row } from '../report.js';
import { FIRST_PARTY_PACKAGES, GATED_PACKAGE } from '../paths.js';
import { PG_URL, reachable } from './sessions.js';

const SECTION = '1. In-process dispatch (testing_ping_pong)';
const OVERHEADS = '1b. Per-call overheads, each on its own';
const RAW_PG_READ = 'raw pg: the session row alone (pool.query)';
const GATED = 'AptixHost.call, a tool whose approval policy says "not needed"';

let sink: unknown;

async function connect(server: { connect(transport: InMemoryTransport): Promise<void> }): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'aptix-bench', version: '0.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

export async function dispatchSection(log: (line: string) => void): Promise<Row[]> {
  const registry = new AgentToolRegistry();
  registry.registerTools([PingPongTool, AsyncPingPongTool, SignalPingPongTool]);
  const executor = new AgentToolExecutor({ registry });

  // The first-party packages, as a host holds them, and ping-pong's twin with an approval policy (issue 21).
  const bench = await composeBenchHost({ toolPackages: [...FIRST_PARTY_PACKAGES, GATED_PACKAGE] });
  const { host } = bench;
  const hostExecutor = host.cradle.executor;
  const session = await host.createSession({ mode: 'tool_diagnostics' });

  // The same host on PostgreSQL (a schema of its own), when the server answers: a call in a session reads it.
  const pgWhy = await reachable(PG_URL);
  const pgSchema = `aptix_bench_dispatch_${process.pid}`;
  const pgUrl = new URL(PG_URL);
  pgUrl.searchParams.set('schema', pgSchema);
  const pgBench = pgWhy === undefined ? await composeBenchHost({ db: pgUrl.href }) : undefined;
  if (pgWhy !== undefined)
    log(
      `  dispatch: PostgreSQL at ${PG_URL.replace(/:[^:@/]*@/, ':***@')} is unreachable (${pgWhy}); its rows are skipped`,
    );
  const pgSession = pgBench === undefined ? undefined : await pgBench.host.createSession({ mode: 'tool_diagnostics' });
  // What the read is made of: the same single-row SELECT on a pool of its own, no host around it.
  const rawPool = pgBench === undefined ? undefined : new pg.Pool({ connectionString: PG_URL, max: 1 });
  const rawRead = `SELECT id, mode, org_id, user_id FROM ${pg.escapeIdentifier(pgSchema)}.agent_sessions WHERE id = $1`;

  // The MCP SDK, on the same function and arguments, its schema written in zod as its docs show.
  const sdkServer = new McpServer({ name: 'bench', version: '0.0.0' });
  sdkServer.registerTool(
    'testing_ping_pong',
    {
      description: PingPongTool.getSchema().description,
      inputSchema: { message: z.string().min(1), count: z.number().int().min(1).max(10).optional() },
    },
    async (args) => ({ content: [{ type: 'text' as const, text: JSON.stringify(pong(args, CONTEXT)) }] }),
  );
  const sdkClient = await connect(sdkServer);
  // Aptix's own MCP server over the same in-memory transport, in a session whose mode offers the tool.
  const aptixMcpClient = await connect(createMcpServer(host, { era: 'legacy', agentSessionId: session.id }, '0.0.0'));

  const lcTool = langchainTool(
    async (args: { message: string; count?: number }) => JSON.stringify(pong(args, CONTEXT)),
    {
      name: 'testing_ping_pong',
      description: PingPongTool.getSchema().description,
      schema: z.object({ message: z.string().min(1), count: z.number().int().min(1).max(10).optional() }),
    },
  );

  // Sanity: every contender answers the same thing before it is timed.
  const expected = JSON.stringify(pong(PING_ARGS, CONTEXT));
  const checks: Array<[string, unknown]> = [
    ['executor', (await executor.execute('testing_ping_pong', PING_JSON, CONTEXT)).result],
    [
      'sdk',
      (
        (await sdkClient.callTool({ name: 'testing_ping_pong', arguments: PING_ARGS })).content as Array<{
          text: string;
        }>
      )[0]!.text,
    ],
    ['langchain', await lcTool.invoke(PING_ARGS)],
  ];
  for (const [who, got] of checks)
    if (got !== expected) throw new Error(`${who} answered ${String(got)}, expected ${expected}`);
  for (const [who, call] of [
    ['AptixHost.call', () => host.call('testing_ping_pong', PING_ARGS, { sessionId: session.id })],
    [
      'AptixHost.call on PostgreSQL',
      () => (pgBench ? pgBench.host.call('testing_ping_pong', PING_ARGS, { sessionId: pgSession!.id }) : undefined),
    ],
    ['AptixHost.call of the gated twin', () => host.call('bench_ping_pong_gated', PING_JSON)],
  ] as const) {
    const viaHost = await call();
    if (viaHost !== undefined && (viaHost.kind !== 'result' || !viaHost.result.successful))
      throw new Error(`${who} failed: ${JSON.stringify(viaHost)}`);
  }

  const loop = (name: string, once: () => unknown): Subject => ({
    name,
    run(n) {
      for (let i = 0; i < n; i++) sink = once();
    },
  });
  const asyncLoop = (name: string, once: () => Promise<unknown>): Subject => ({
    name,
    async run(n) {
      for (let i = 0; i < n; i++) sink = await once();
    },
  });

  log('  dispatch: contenders');
  const bare = loop('bare: JSON.parse, run, JSON.stringify', () =>
    JSON.stringify(pong(JSON.parse(PING_JSON), CONTEXT)),
  );
  const contenders = await compare(
    [
      bare,
      asyncLoop('AgentToolExecutor.execute (JSON text)', () =>
        executor.execute('testing_ping_pong', PING_JSON, CONTEXT),
      ),
      asyncLoop('AgentToolExecutor.execute (parsed object)', () =>
        executor.execute('testing_ping_pong', PING_ARGS, CONTEXT),
      ),
      asyncLoop('… tool with an async run (deadline race on)', () =>
        executor.execute('bench_ping_pong_async', PING_JSON, CONTEXT),
      ),
      asyncLoop('… tool whose run takes the signal', () =>
        executor.execute('bench_ping_pong_signal', PING_JSON, CONTEXT),
      ),
      asyncLoop("the host's executor (a tool built per call on the container's cradle)", () =>
        hostExecutor.execute('testing_ping_pong', PING_JSON, CONTEXT),
      ),
      asyncLoop('AptixHost.call, no session', () => host.call('testing_ping_pong', PING_JSON)),
      asyncLoop('AptixHost.call in a session (SQLite read, mode check)', () =>
        host.call('testing_ping_pong', PING_JSON, { sessionId: session.id }),
      ),
      ...(pgBench === undefined
        ? []
        : [
            asyncLoop('AptixHost.call in a session (PostgreSQL read, mode check)', () =>
              pgBench.host.call('testing_ping_pong', PING_JSON, { sessionId: pgSession!.id }),
            ),
            asyncLoop(RAW_PG_READ, () => rawPool!.query(rawRead, [pgSession!.id])),
          ]),
      asyncLoop(GATED, () => host.call('bench_ping_pong_gated', PING_JSON)),
      asyncLoop("Aptix's MCP server, in-memory callTool", () =>
        aptixMcpClient.callTool({ name: 'testing_ping_pong', arguments: PING_ARGS }),
      ),
      asyncLoop('MCP SDK McpServer, in-memory callTool', () =>
        sdkClient.callTool({ name: 'testing_ping_pong', arguments: PING_ARGS }),
      ),
      asyncLoop('LangChain tool().invoke', () => lcTool.invoke(PING_ARGS)),
    ],
    { rounds: 15, roundMs: 50 },
  );

  log('  dispatch: where the time goes');
  const parameters = registry.get('testing_ping_pong')!.parameters as JsonSchema;
  const parsed = JSON.parse(PING_JSON) as typeof PING_ARGS;
  const value = pong(parsed, CONTEXT);
  const parts = await compare([
    bare,
    loop('JSON.parse', () => JSON.parse(PING_JSON)),
    loop('decodeArguments: secure parse + ajv check', () =>
      decodeArguments('testing_ping_pong', parameters, PING_JSON),
    ),
    loop('run (the tool itself)', () => pong(parsed, CONTEXT)),
    loop('JSON.stringify of the result', () => JSON.stringify(value)),
    asyncLoop('await of a resolved promise', () => Promise.resolve(value)),
    asyncLoop('AgentToolExecutor.execute', () => executor.execute('testing_ping_pong', PING_JSON, CONTEXT)),
  ]);

  log('  dispatch: overheads');
  const { asClass, asValue, createContainer, InjectionMode } = awilix;
  const container = createContainer({ injectionMode: InjectionMode.PROXY, strict: true });
  container.register({ logger: asValue(silentAdminLogger) });
  const resolver = asClass(PingPongTool as never);
  const callerSignal = new AbortController().signal;
  const listener = () => {};
  const weak = new WeakSet<object>();
  const storage = new AsyncLocalStorage<{ reqId: string }>();
  const pino = host.cradle.pino;
  const overheads = await compare(
    [
      bare,
      loop('setTimeout + clearTimeout (a timer per call)', () => clearTimeout(setTimeout(listener, 30_000))),
      loop('new AbortController().signal', () => new AbortController().signal),
      loop('AbortSignal.timeout(30 s)', () => AbortSignal.timeout(30_000)),
      loop("listening to the caller's signal (add + remove)", () => {
        callerSignal.addEventListener('abort', listener, { once: true });
        callerSignal.removeEventListener('abort', listener);
      }),
      loop('awilix container.build(ToolClass)', () => container.build(PingPongTool as never)),
      loop('awilix build from a resolver made once', () => container.build(resolver)),
      loop('awilix createScope()', () => container.createScope()),
      loop('new PingPongTool({ logger })', () => new PingPongTool({ logger: silentAdminLogger })),
      loop('pino child logger', () => pino.child({ reqId: 'r-1' })),
      loop('AsyncLocalStorage.run', () => storage.run({ reqId: 'r-1' }, () => 1)),
      loop('WeakSet.add of the result (a trust marker)', () => weak.add({ successful: true })),
    ],
    { rounds: 7, roundMs: 40 },
  );

  await Promise.all([sdkClient.close(), aptixMcpClient.close()]);
  await bench.close();
  if (pgBench !== undefined) {
    await rawPool!.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(pgSchema)} CASCADE`);
    await rawPool!.end();
    await pgBench.close();
  }

  const bareTiming = contenders[0]!;
  const rows: Row[] = [];
  const perCall = (name: string, ns: number) => `${(ns / 1000).toFixed(2)} µs per call`;
  rows.push({
    section: SECTION,
    measure: bareTiming.name,
    figure: bareTiming.opsPerSec,
    unit: 'calls/s',
    note: `${perCall(bareTiming.name, bareTiming.nsPerOp)}: the physical limit, with no checks at all.`,
  });
  const byName = new Map(contenders.map((timing) => [timing.name, timing]));
  for (const timing of contenders.slice(1)) {
    if (timing.name === RAW_PG_READ) continue;
    if (timing.name === GATED) {
      // Issue 21: the same tool without a policy, called the same way, is the baseline.
      const plain = byName.get('AptixHost.call, no session')!;
      rows.push({
        section: SECTION,
        measure: timing.name,
        figure: timing.opsPerSec,
        unit: 'calls/s',
        baseline: { name: 'the same tool without a policy', figure: plain.opsPerSec },
        goal: { kind: 'ratio-at-least', value: 0.9 },
        note:
          `${perCall(timing.name, timing.nsPerOp)}, ` +
          `${Math.abs(timing.nsPerOp - plain.nsPerOp).toFixed(0)} ns ` +
          `${timing.nsPerOp >= plain.nsPerOp ? 'more' : 'less'} than testing_ping_pong through ` +
          `AptixHost.call: the policy runs on the validated arguments, which then go to the tool as an object.`,
      });
      continue;
    }
    const raw = timing.name.includes('PostgreSQL read') ? byName.get(RAW_PG_READ) : undefined;
    const goal = timing.name.startsWith('AgentToolExecutor.execute (JSON')
      ? ({ kind: 'ratio-at-least', value: 0.7 } as const)
      : timing.name.startsWith('AgentToolExecutor') ||
          timing.name.startsWith('… tool with an async') ||
          timing.name.startsWith("the host's executor")
        ? ({ kind: 'ratio-at-least', value: 0.5 } as const)
        : undefined;
    rows.push({
      section: SECTION,
      measure: timing.name,
      figure: timing.opsPerSec,
      unit: 'calls/s',
      baseline: { name: 'bare', figure: bareTiming.opsPerSec },
      ...(goal ? { goal } : {}),
      note:
        raw === undefined
          ? perCall(timing.name, timing.nsPerOp)
          : `${perCall(timing.name, timing.nsPerOp)}; the same SELECT alone on a pg pool: ` +
            `${(raw.nsPerOp / 1000).toFixed(1)} µs, so ${(timing.nsPerOp / raw.nsPerOp).toFixed(2)}× a ` +
            `bare round trip to the server.`,
    });
  }

  const execTiming = parts.at(-1)!;
  for (const part of parts.slice(1, -1)) {
    rows.push({
      section: '1a. Where a call of AgentToolExecutor.execute goes',
      measure: part.name,
      figure: part.nsPerOp,
      unit: 'ns',
      baseline: { name: 'whole call', figure: execTiming.nsPerOp },
    });
  }
  const [, , decode, run, stringify] = parts;
  const own = execTiming.nsPerOp - decode!.nsPerOp - run!.nsPerOp - stringify!.nsPerOp;
  rows.push({
    section: '1a. Where a call of AgentToolExecutor.execute goes',
    measure: 'the rest, by difference: lookup, tool instance, checks, envelope, promise',
    figure: own,
    unit: 'ns',
    baseline: { name: 'whole call', figure: execTiming.nsPerOp },
    note: 'The whole call minus parse + check, run and serialise, each timed on its own loop (so only roughly).',
  });

  for (const overhead of overheads.slice(1)) {
    rows.push({
      section: OVERHEADS,
      measure: overhead.name,
      figure: overhead.nsPerOp,
      unit: 'ns',
      baseline: { name: 'a bare call', figure: overheads[0]!.nsPerOp },
    });
  }
  void sink;
  return rows;
}
