/**
 * 2. Start-up: registering 1,000 generated tools with every contract check, listing them, and the MCP
 * SDK doing the same, each in a fresh process; the host's cold start to ready.
 * 5. Memory and import cost: the host's RSS, and the cold import of @aptix/tool-contract.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { median } from '../harness.js';
import { APTIX_BIN, BARE_SERVER, BENCH_ROOT, FIRST_PARTY_PACKAGES, MANY_TOOLS, WORKSPACE_ROOT } from '../paths.js';
import { listeningLine, portLine, rssMiB, startServer } from '../processes.js';
import type { Row } from '../report.js';

const run = promisify(execFile);
const STARTUP = '2. Start-up (1,000 generated tools)';
const MEMORY = '5. Memory and import cost';
const PROBE = join(BENCH_ROOT, 'src', 'probes', 'register.ts');

async function probe(kind: 'aptix' | 'sdk', count: number, repeat: number): Promise<Record<string, number[]>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', PROBE, kind, String(count), String(repeat)], {
    cwd: BENCH_ROOT,
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number[]>;
}

/** Median of the warm runs (all but the first, which is the cold start of the process). */
const warm = (samples: readonly number[]) => median(samples.slice(1));

export async function registrationRows(count: number, log: (line: string) => void): Promise<Row[]> {
  log('  start-up: registering generated tools (fresh processes)');
  const aptix = await probe('aptix', count, 9);
  const sdk = await probe('sdk', count, 5);
  const sdkFirst = { name: 'MCP SDK register + first list', figure: warm(sdk.registerAndFirstList!) };
  return [
    {
      section: STARTUP,
      measure: `registerTools(${count}) with every contract check`,
      figure: warm(aptix.register!),
      unit: 'ms',
      baseline: sdkFirst,
      goal: { kind: 'at-most', value: 50, unit: 'ms' },
      note:
        `Median of 8 registrations into fresh registries after the first. The first, in a fresh ` +
        `process (ajv's meta-schema compiled, nothing JIT-compiled yet): ` +
        `${aptix.register![0]!.toFixed(0)} ms.`,
    },
    {
      section: STARTUP,
      measure: '… then the first definitions() (strict views derived)',
      figure: warm(aptix.firstDefinitions!),
      unit: 'ms',
      baseline: sdkFirst,
    },
    {
      section: STARTUP,
      measure: `cached definitions('mcp') of ${count} tools`,
      figure: warm(aptix.cachedDefinitions!),
      unit: 'ms',
      baseline: { name: 'MCP SDK later list', figure: warm(sdk.laterList!) },
      goal: { kind: 'at-most', value: 5, unit: 'ms' },
    },
    {
      section: STARTUP,
      measure: `MCP tools/list of ${count} tools, SDK client over in-memory transport`,
      figure: median(aptix.mcpList!.slice(1)),
      unit: 'ms',
      baseline: { name: 'MCP SDK later list', figure: warm(sdk.laterList!) },
      note: "Aptix's cached definitions served by the SDK's low-level Server; most of it is the SDK client validating the result with zod.",
    },
    {
      section: STARTUP,
      measure: `MCP SDK: ${count} × registerTool (zod) + first tools/list`,
      figure: sdkFirst.figure,
      unit: 'ms',
      note: `First, in a fresh process: ${sdk.registerAndFirstList![0]!.toFixed(0)} ms. Every later tools/list: ${warm(sdk.laterList!).toFixed(0)} ms (it converts the zod schemas again each time).`,
    },
    {
      section: STARTUP,
      measure: `compiling ${count} ajv validators eagerly (not done: compiled on first call)`,
      figure: aptix.eagerCompile![0]!,
      unit: 'ms',
      baseline: { name: 'registerTools', figure: warm(aptix.register!) },
    },
  ];
}

interface Started {
  readonly startMs: number;
  readonly rss: number | undefined;
}

async function coldStarts(
  times: number,
  start: () => Promise<{ startMs: number; child: { pid?: number }; stop(): Promise<void> }>,
): Promise<Started[]> {
  const out: Started[] = [];
  for (let i = 0; i < times; i++) {
    const server = await start();
    // Let start-up work that follows "listening" settle before reading the RSS.
    await new Promise((resolve) => setTimeout(resolve, 300));
    out.push({ startMs: server.startMs, rss: rssMiB(server.child.pid) });
    await server.stop();
  }
  return out;
}

export interface StartFigures {
  readonly rows: Row[];
  readonly rss: {
    readonly host: number | undefined;
    readonly manyTools: number | undefined;
    readonly bare: number | undefined;
  };
}

export async function coldStartRows(count: number, log: (line: string) => void): Promise<StartFigures> {
  log('  start-up: cold starts');
  const dir = mkdtempSync(join(tmpdir(), 'aptix-bench-start-'));
  try {
    const host = (packages: readonly string[]) => () =>
      startServer([APTIX_BIN, 'serve', '--port', '0'], {
        ready: listeningLine,
        cwd: dir,
        env: {
          LOG_LEVEL: 'info',
          APTIX_DB: `sqlite:${join(dir, 'start.db')}`,
          APTIX_TOOL_PACKAGES: packages.join(','),
          APTIX_BENCH_TOOL_COUNT: String(count),
        },
      });
    const bare = await coldStarts(5, () => startServer([BARE_SERVER], { ready: portLine, cwd: WORKSPACE_ROOT }));
    const firstParty = await coldStarts(5, host(FIRST_PARTY_PACKAGES));
    const many = await coldStarts(3, host([...FIRST_PARTY_PACKAGES, MANY_TOOLS]));
    const bareStart = median(bare.map((s) => s.startMs));
    const rssOf = (runs: Started[]) =>
      runs.every((s) => s.rss !== undefined) ? median(runs.map((s) => s.rss!)) : undefined;
    return {
      rows: [
        {
          section: STARTUP,
          measure: 'host cold start to ready, first-party tools (aptix serve)',
          figure: median(firstParty.map((s) => s.startMs)),
          unit: 'ms',
          baseline: { name: 'bare Fastify process', figure: bareStart },
          note:
            'From spawning node to the "Aptix listening" line: loading the packages, the contract ' +
            'check of every tool, the catalog check, opening SQLite (migrations), building each tool ' +
            'once, OpenAPI. Median of 5.',
        },
        {
          section: STARTUP,
          measure: `host cold start to ready, first-party + ${count} generated tools`,
          figure: median(many.map((s) => s.startMs)),
          unit: 'ms',
          baseline: { name: 'bare Fastify process', figure: bareStart },
        },
      ],
      rss: { host: rssOf(firstParty), manyTools: rssOf(many), bare: rssOf(bare) },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function importMs(specifier: string): Promise<number> {
  const code = `const t = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: BENCH_ROOT });
  return Number(stdout);
}

export async function memoryRows(
  rss: StartFigures['rss'] & { loaded: number | undefined },
  count: number,
  log: (line: string) => void,
): Promise<Row[]> {
  log('  memory: cold imports');
  const samples: Record<string, number[]> = { contract: [], ajv: [], pino: [], host: [] };
  for (let i = 0; i < 7; i++) {
    samples.contract!.push(await importMs('@aptix/tool-contract'));
    samples.ajv!.push(await importMs('ajv'));
    samples.pino!.push(await importMs('pino'));
    if (i < 3) samples.host!.push(await importMs('@aptix/host'));
  }
  const ajv = median(samples.ajv!);
  const rows: Row[] = [];
  const bare = rss.bare === undefined ? undefined : { name: 'bare Fastify process', figure: rss.bare };
  if (rss.host !== undefined)
    rows.push({
      section: MEMORY,
      measure: 'host RSS at ready, first-party tools',
      figure: rss.host,
      unit: 'MiB',
      ...(bare ? { baseline: bare } : {}),
    });
  if (rss.loaded !== undefined)
    rows.push({
      section: MEMORY,
      measure: '… after the HTTP benchmarks (invoke + MCP load)',
      figure: rss.loaded,
      unit: 'MiB',
      ...(bare ? { baseline: bare } : {}),
    });
  if (rss.manyTools !== undefined) {
    rows.push({
      section: MEMORY,
      measure: `host RSS at ready, first-party + ${count} generated tools`,
      figure: rss.manyTools,
      unit: 'MiB',
      ...(rss.host === undefined ? {} : { baseline: { name: 'first-party only', figure: rss.host } }),
      note:
        rss.host === undefined
          ? undefined
          : `About ${(((rss.manyTools - rss.host) * 1024) / count).toFixed(0)} KiB per tool (classes, schemas, strict views; validators are compiled on first call).`,
    });
  }
  rows.push(
    {
      section: MEMORY,
      measure: 'cold import of @aptix/tool-contract (built dist, fresh process)',
      figure: median(samples.contract!),
      unit: 'ms',
      baseline: { name: 'import of ajv alone', figure: ajv },
      goal: { kind: 'at-most', value: 100, unit: 'ms' },
      note: `Median of 7. It loads ajv, ajv-formats and pino with it (pino alone: ${median(samples.pino!).toFixed(0)} ms); secure-json-parse only when a text needs it; TypeBox is a type-only import.`,
    },
    {
      section: MEMORY,
      measure: 'cold import of @aptix/host (for comparison)',
      figure: median(samples.host!),
      unit: 'ms',
      baseline: { name: 'import of ajv alone', figure: ajv },
    },
  );
  return rows;
}

export { MEMORY, STARTUP };
