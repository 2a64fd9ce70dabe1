/**
 * 9. Isolation (issue 14): a call to a tool package loaded with `isolation: "worker"` against the same
 * call in process and against the MCP SDK's in-memory `callTool`, in the same run, one call at a time and
 * several in flight (each against the SDK measured the same way); the host's RSS with
 * one isolated package against the same host without; and the time from a busy loop starting to its
 * worker being replaced and the next call answered.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AptixHost, composeHost, loadConfig } from '@aptix/host';
import { PingPongTool } from '@aptix/tool-samples';
import { z } from 'zod';
import { CONTEXT, PING_ARGS, PING_JSON, pong } from '../fixtures.js';
import { compare, median, type Subject } from '../harness.js';
import { APTIX_BIN, FIRST_PARTY_PACKAGES, WORKSPACE_ROOT } from '../paths.js';
import { freePort, rssMiB, startServer } from '../processes.js';
import type { Row } from '../report.js';

const SECTION = '9. Isolation: a tool package in worker threads';
const MISBEHAVING = join(WORKSPACE_ROOT, 'apps', 'host', 'test', 'fixtures', 'broken', 'isolated');
/** Calls in flight together in the concurrent rows. */
const IN_FLIGHT = 8;
/** The fixture's iso_busy_loop declares TimeoutMs = 1000. */
const BUSY_TIMEOUT_MS = 1000;

/**
 * A transport tried for the one-call-at-a-time goal and not kept (the prototype is on the branch
 * iso-transport-sab-prototype). Measured on this 2-core VM at load 4 to 9, CPU per call from
 * process.cpuUsage, medians of 21 alternating runs (5 for the variants), the SDK in the same runs.
 */
const SHARED_MEMORY_TRIAL =
  'Tried and not kept: call messages through a SharedArrayBuffer ring each way, the idle ' +
  'worker blocked in Atomics.wait (only with no call in flight and no timer or I/O of its ' +
  'own) and the host listening with Atomics.waitAsync, so no postMessage crosses. ' +
  'Bare round trips between two threads, nothing in them: postMessage 14.9 µs of CPU, worker ' +
  'in Atomics.wait with the host in Atomics.waitAsync 12.9, both in Atomics.waitAsync 18.1, ' +
  'both blocked in Atomics.wait 8.7 (a floor the host cannot use: it would block its event loop). ' +
  'In the isolated call it cost more, not less: 29.5 µs per sequential call against 24.6 ' +
  'with postMessage (the SDK 18 to 19), 0.64× the SDK against 0.78×; calls through the ring ' +
  'with answers by postMessage 21.8 against 22.9, within the noise; answers through the ring, ' +
  'waking the host through Atomics.waitAsync, 29.6; eight in flight nothing changed (12.4 ' +
  'against 12.7). ' +
  "Two thread wake-ups cost at their cheapest about half an SDK call here, and the call's " +
  'own work on both threads about 8 µs more, so no transport that lets both threads sleep ' +
  'between calls reaches the SDK on this machine.';

export interface IsolationBenchOptions {
  readonly rounds?: number;
  readonly roundMs?: number;
  readonly replacements?: number;
}

type Entry = string | Record<string, unknown>;

function configFile(dir: string, name: string, toolPackages: readonly Entry[]): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ db: `sqlite:${join(dir, `${name}.db`)}`, logLevel: 'silent', toolPackages }));
  return file;
}

async function compose(dir: string, name: string, toolPackages: readonly Entry[]): Promise<AptixHost> {
  return new AptixHost(
    await composeHost(await loadConfig({ file: configFile(dir, name, toolPackages), cwd: dir, env: {} })),
  );
}

const isolatedSamples = (workers: number) => [
  { package: '@aptix/tool-samples', isolation: 'worker', workers },
  ...FIRST_PARTY_PACKAGES.slice(1),
];

export async function isolationSection(options: IsolationBenchOptions, log: (line: string) => void): Promise<Row[]> {
  const rows: Row[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'aptix-bench-isolation-'));
  try {
    rows.push(...(await callRows(dir, options, log)));
    rows.push(...(await rssRows(dir, log)));
    rows.push(...(await replacementRows(dir, options.replacements ?? 5, log)));
    rows.push(...(await healthDuringBusyLoopRows(dir, log)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

async function callRows(dir: string, options: IsolationBenchOptions, log: (line: string) => void): Promise<Row[]> {
  log('  calls: in process, isolated, MCP SDK in memory');
  const inProcess = await compose(dir, 'in-process', FIRST_PARTY_PACKAGES);
  const isolated = await compose(dir, 'isolated', isolatedSamples(1));
  const sdkServer = new McpServer({ name: 'bench', version: '0.0.0' });
  sdkServer.registerTool(
    'testing_ping_pong',
    {
      description: PingPongTool.getSchema().description,
      inputSchema: { message: z.string().min(1), count: z.number().int().min(1).max(10).optional() },
    },
    async (args) => ({ content: [{ type: 'text' as const, text: JSON.stringify(pong(args, CONTEXT)) }] }),
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const sdkClient = new Client({ name: 'aptix-bench', version: '0.0.0' });
  await Promise.all([sdkServer.connect(serverSide), sdkClient.connect(clientSide)]);
  try {
    const expected = JSON.stringify(pong(PING_ARGS, CONTEXT));
    for (const [who, host] of [
      ['in process', inProcess],
      ['isolated', isolated],
    ] as const) {
      const got = await host.cradle.executor.execute('testing_ping_pong', PING_JSON, CONTEXT);
      if (got.result !== expected) throw new Error(`${who} answered ${JSON.stringify(got)}, expected ${expected}`);
    }
    const sequential = (name: string, once: () => Promise<unknown>): Subject => ({
      name,
      async run(n) {
        for (let i = 0; i < n; i++) await once();
      },
    });
    // IN_FLIGHT calls started together, the next IN_FLIGHT once all have answered: what a host serving
    // several clients at once sees. The SDK is measured the same way, so the ratio compares like with like.
    const together = (name: string, once: () => Promise<unknown>): Subject => ({
      name,
      async run(n) {
        for (let i = 0; i < n; i += IN_FLIGHT) await Promise.all(Array.from({ length: IN_FLIGHT }, once));
      },
    });
    const inProcessExecutor = inProcess.cradle.executor;
    const isolatedExecutor = isolated.cradle.executor;
    const isolatedCall = () => isolatedExecutor.execute('testing_ping_pong', PING_JSON, CONTEXT);
    const sdkCall = () => sdkClient.callTool({ name: 'testing_ping_pong', arguments: PING_ARGS });
    const [local, worker, sdk, workerTogether, sdkTogether] = await compare(
      [
        sequential('in process: AgentToolExecutor.execute', () =>
          inProcessExecutor.execute('testing_ping_pong', PING_JSON, CONTEXT),
        ),
        sequential('isolated (1 worker): AgentToolExecutor.execute', isolatedCall),
        sequential('MCP SDK in memory: Client.callTool', sdkCall),
        together(`isolated (1 worker): AgentToolExecutor.execute, ${IN_FLIGHT} calls in flight`, isolatedCall),
        together(`MCP SDK in memory: Client.callTool, ${IN_FLIGHT} calls in flight`, sdkCall),
      ],
      { rounds: options.rounds ?? 9, roundMs: options.roundMs ?? 200 },
    );
    // CPU time per call, every thread of the process counted: unlike the wall time, it does not grow with
    // how long the scheduler of a loaded machine takes to run the worker's thread and the host's back.
    const cpuPerCall = async (subject: Subject, n: number) => {
      const start = process.cpuUsage();
      await subject.run(n);
      const used = process.cpuUsage(start);
      return (used.user + used.system) / n;
    };
    const cpu = {
      worker: [] as number[],
      sdk: [] as number[],
      workerTogether: [] as number[],
      sdkTogether: [] as number[],
    };
    for (let round = 0; round < 3; round++) {
      cpu.worker.push(await cpuPerCall(sequential('', isolatedCall), 5000));
      cpu.sdk.push(await cpuPerCall(sequential('', sdkCall), 5000));
      cpu.workerTogether.push(await cpuPerCall(together('', isolatedCall), 5000));
      cpu.sdkTogether.push(await cpuPerCall(together('', sdkCall), 5000));
    }
    const us = (ns: number) => `${(ns / 1000).toFixed(1)} µs per call`;
    const cpuNote =
      "process.cpuUsage over 5000 calls, median of 3: the work a call costs, whatever the machine's load does to the thread hand-offs' wall time.";
    return [
      {
        section: SECTION,
        measure: local!.name,
        figure: local!.opsPerSec,
        unit: 'calls/s',
        note: `${us(local!.nsPerOp)}; one call in flight.`,
      },
      {
        section: SECTION,
        measure: sdk!.name,
        figure: sdk!.opsPerSec,
        unit: 'calls/s',
        note: `${us(sdk!.nsPerOp)}; one call in flight; the same function, its schema in zod.`,
      },
      {
        section: SECTION,
        measure: `${worker!.name}, one call at a time, against the MCP SDK in memory the same way`,
        figure: worker!.opsPerSec,
        unit: 'calls/s',
        baseline: { name: 'MCP SDK in memory, one call at a time', figure: sdk!.opsPerSec },
        goal: { kind: 'ratio-at-least', value: 1 },
        note:
          `${us(worker!.nsPerOp)}: each call waits for the previous answer, so it pays two thread ` +
          `wake-ups (the call to the worker, the answer back), one string message each way (the ` +
          `arguments' and the result's JSON text as they are), the worker's executor, and the host ` +
          `checking the result again.`,
      },
      {
        section: SECTION,
        measure: `${worker!.name}, one call at a time: CPU per call, all threads, against the MCP SDK in memory`,
        figure: median(cpu.worker),
        unit: 'µs',
        baseline: { name: 'MCP SDK in memory', figure: median(cpu.sdk) },
        note: `${cpuNote} ${SHARED_MEMORY_TRIAL}`,
      },
      {
        section: SECTION,
        measure: `${workerTogether!.name}, against the MCP SDK in memory the same way`,
        figure: workerTogether!.opsPerSec,
        unit: 'calls/s',
        baseline: { name: `MCP SDK in memory, ${IN_FLIGHT} calls in flight`, figure: sdkTogether!.opsPerSec },
        goal: { kind: 'ratio-at-least', value: 1 },
        note:
          `${us(workerTogether!.nsPerOp)}: ${IN_FLIGHT} calls started together (Promise.all), the ` +
          `next ${IN_FLIGHT} when all have answered, for both. Calls in flight together share the ` +
          `thread wake-ups: a woken thread takes every message queued by then, and calls queued in ` +
          `one turn of the event loop cross as one message.`,
      },
      {
        section: SECTION,
        measure: `${workerTogether!.name}: CPU per call, all threads, against the MCP SDK in memory the same way`,
        figure: median(cpu.workerTogether),
        unit: 'µs',
        baseline: { name: `MCP SDK in memory, ${IN_FLIGHT} in flight`, figure: median(cpu.sdkTogether) },
        note: cpuNote,
      },
      {
        section: SECTION,
        measure: `${worker!.name}, against in process`,
        figure: worker!.opsPerSec,
        unit: 'calls/s',
        baseline: { name: 'in process', figure: local!.opsPerSec },
        note: 'What isolation costs a small call, one at a time.',
      },
    ];
  } finally {
    await sdkClient.close();
    await inProcess.close();
    await isolated.close();
  }
}

/** RSS of `aptix serve` after start-up and a few calls: first-party packages in process, then with tool-samples isolated (2 workers, the default). */
async function rssRows(dir: string, log: (line: string) => void): Promise<Row[]> {
  log('  RSS: aptix serve, without and with an isolated package');
  const measure = async (name: string, toolPackages: readonly Entry[]) => {
    const port = await freePort();
    const server = await startServer(
      [APTIX_BIN, '--config', configFile(dir, name, toolPackages), 'serve', '--port', String(port)],
      { port, cwd: dir, env: { LOG_LEVEL: 'warn' } },
    );
    try {
      for (let i = 0; i < 50; i++) {
        const response = await fetch(`${server.url}/v1/tools/testing_ping_pong/invoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ arguments: PING_ARGS }),
        });
        if (!response.ok) throw new Error(`${name}: invoke answered ${response.status}`);
        await response.text();
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      return rssMiB(server.child.pid);
    } finally {
      await server.stop();
    }
  };
  const plain = await measure('rss-in-process', FIRST_PARTY_PACKAGES);
  const withWorkers = await measure('rss-isolated', isolatedSamples(2));
  if (plain === undefined || withWorkers === undefined) return [];
  return [
    {
      section: SECTION,
      measure: 'host RSS with @aptix/tool-samples isolated (2 workers)',
      figure: withWorkers,
      unit: 'MiB',
      baseline: { name: 'every package in process', figure: plain },
      note: `${(withWorkers - plain).toFixed(0)} MiB more: each worker is a V8 isolate with its own copy of the package and of @aptix/tool-contract.`,
    },
  ];
}

/**
 * A busy loop with a 1 s time-out, on a package with one worker: from the call starting to the next call
 * answered, which needs the stuck worker ended and a fresh one started.
 */
async function replacementRows(dir: string, times: number, log: (line: string) => void): Promise<Row[]> {
  log('  busy loop: time-out, worker replaced, next call answered');
  const host = await compose(dir, 'busy', [
    ...FIRST_PARTY_PACKAGES,
    { package: MISBEHAVING, isolation: 'worker', workers: 1 },
  ]);
  const { executor } = host.cradle;
  const samples: number[] = [];
  try {
    for (let i = 0; i < times; i++) {
      const started = performance.now();
      const busy = await executor.execute('iso_busy_loop', '{}', CONTEXT);
      if (busy.errors[0]?.code !== 'TIMEOUT') throw new Error(`iso_busy_loop answered ${JSON.stringify(busy)}`);
      const next = await executor.execute('iso_echo', '{"text":"after"}', CONTEXT);
      if (!next.successful) throw new Error(`the call after the busy loop failed: ${JSON.stringify(next)}`);
      samples.push(performance.now() - started);
    }
  } finally {
    await host.close();
  }
  const total = median(samples);
  return [
    {
      section: SECTION,
      measure: 'busy loop started → worker replaced → next call answered',
      figure: total,
      unit: 'ms',
      baseline: { name: "the tool's time-out", figure: BUSY_TIMEOUT_MS },
      note:
        `median of ${times}; ${(total - BUSY_TIMEOUT_MS).toFixed(0)} ms past the time-out: the ` +
        `ping that finds the worker stuck (up to 500 ms), ending it, and starting a fresh worker ` +
        `that imports the package again.`,
    },
  ];
}

/** Latencies of `GET /healthz`, one request after another, for `ms` milliseconds. */
async function pollHealth(url: string, ms: number): Promise<number[]> {
  const latencies: number[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const started = performance.now();
    const response = await fetch(`${url}/healthz`);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`/healthz answered ${response.status}`);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

function p99(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? NaN;
}

/**
 * The issue's promise that an isolated busy loop cannot freeze the host: `/healthz` p99 on a real
 * `aptix serve` while an isolated tool busy-loops until its time-out, against the same host idle.
 */
async function healthDuringBusyLoopRows(dir: string, log: (line: string) => void): Promise<Row[]> {
  log('  /healthz while an isolated tool busy-loops');
  const port = await freePort();
  const server = await startServer(
    [
      APTIX_BIN,
      '--config',
      configFile(dir, 'health', [...FIRST_PARTY_PACKAGES, { package: MISBEHAVING, isolation: 'worker', workers: 1 }]),
      'serve',
      '--port',
      String(port),
    ],
    {
      port,
      cwd: dir,
      env: { LOG_LEVEL: 'warn' },
    },
  );
  try {
    await pollHealth(server.url, 300); // warm up
    const idle = await pollHealth(server.url, BUSY_TIMEOUT_MS);
    const invoke = fetch(`${server.url}/v1/tools/iso_busy_loop/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"arguments":{}}',
    });
    const busy = await pollHealth(server.url, BUSY_TIMEOUT_MS - 100);
    const answer = (await (await invoke).json()) as { errors?: Array<{ code?: string }> };
    if (answer.errors?.[0]?.code !== 'TIMEOUT') throw new Error(`iso_busy_loop answered ${JSON.stringify(answer)}`);
    return [
      {
        section: SECTION,
        measure: '/healthz p99 while an isolated tool busy-loops (aptix serve)',
        figure: p99(busy),
        unit: 'ms',
        baseline: { name: 'the same host idle', figure: p99(idle) },
        goal: { kind: 'at-most', value: 50, unit: 'ms' },
        note: `${busy.length} requests during the loop, ${idle.length} idle; the loop runs in a worker thread, so the host's event loop keeps answering.`,
      },
    ];
  } finally {
    await server.stop();
  }
}
