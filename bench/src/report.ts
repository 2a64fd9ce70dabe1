import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { median } from './harness.js';
import { WORKSPACE_ROOT } from './paths.js';

/** A goal a figure is held to. */
export type Goal =
  | { readonly kind: 'ratio-at-least'; readonly value: number }
  | { readonly kind: 'ratio-at-most'; readonly value: number }
  | { readonly kind: 'at-most'; readonly value: number; readonly unit: string }
  | { readonly kind: 'at-least'; readonly value: number; readonly unit: string };

/** One line of the table: a figure, the baseline it is compared with (same run), and its goal if any. */
export interface Row {
  readonly section: string;
  readonly measure: string;
  readonly figure: number;
  readonly unit: string;
  readonly baseline?: { readonly name: string; readonly figure: number };
  readonly goal?: Goal;
  /** What the figure means when it is not obvious. */
  readonly note?: string;
}

export function ratio(row: Row): number | undefined {
  return row.baseline === undefined || row.baseline.figure === 0 ? undefined : row.figure / row.baseline.figure;
}

export function goalMet(row: Row): boolean | undefined {
  const { goal } = row;
  if (goal === undefined) return undefined;
  const r = ratio(row);
  switch (goal.kind) {
    case 'ratio-at-least':
      return r === undefined ? undefined : r >= goal.value;
    case 'ratio-at-most':
      return r === undefined ? undefined : r <= goal.value;
    case 'at-most':
      return row.figure <= goal.value;
    case 'at-least':
      return row.figure >= goal.value;
  }
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100_000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(2);
}

function formatGoal(goal: Goal | undefined): string {
  if (goal === undefined) return '';
  switch (goal.kind) {
    case 'ratio-at-least':
      return `≥ ${goal.value}×`;
    case 'ratio-at-most':
      return `≤ ${Number(goal.value.toFixed(2))}×`;
    case 'at-most':
      return `< ${goal.value} ${goal.unit}`;
    case 'at-least':
      return `≥ ${goal.value}${goal.unit === '' ? '' : ` ${goal.unit}`}`;
  }
}

export function cells(row: Row): string[] {
  const r = ratio(row);
  const met = goalMet(row);
  return [
    row.measure,
    `${formatNumber(row.figure)} ${row.unit}`,
    row.baseline ? `${row.baseline.name}: ${formatNumber(row.baseline.figure)} ${row.unit}` : '',
    r === undefined ? '' : `${r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2)}×`,
    formatGoal(row.goal),
    met === undefined ? '' : met ? 'yes' : 'NO',
  ];
}

const HEADER = ['Measure', 'Figure', 'Baseline (same run)', 'Ratio', 'Goal', 'Met'];

/** The table for a terminal: fixed-width columns, one block per section. */
export function textTable(rows: readonly Row[]): string {
  const body = rows.map(cells);
  const widths = HEADER.map((h, i) => Math.min(64, Math.max(h.length, ...body.map((c) => c[i]!.length))));
  const line = (c: readonly string[]) =>
    c
      .map((text, i) => text.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const out: string[] = [];
  let section = '';
  for (const [index, row] of rows.entries()) {
    if (row.section !== section) {
      section = row.section;
      out.push('', `== ${section} ==`, line(HEADER));
    }
    out.push(line(body[index]!));
  }
  return out.join('\n');
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** The table as Markdown, one table per section, with the notes under it. */
export function markdownTables(rows: readonly Row[]): string {
  const out: string[] = [];
  const sections = [...new Set(rows.map((row) => row.section))];
  for (const section of sections) {
    const inSection = rows.filter((row) => row.section === section);
    out.push(
      `### ${section}`,
      '',
      `| ${HEADER.join(' | ')} |`,
      `|${HEADER.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
    );
    for (const row of inSection) out.push(`| ${cells(row).map(escapeCell).join(' | ')} |`);
    const notes = inSection.filter((row) => row.note);
    if (notes.length > 0) {
      out.push('');
      for (const row of notes) out.push(`- *${row.measure}*: ${row.note}`);
    }
    out.push('');
  }
  return out.join('\n');
}

function versionOf(name: string): string {
  try {
    return (
      JSON.parse(readFileSync(join(WORKSPACE_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
  } catch {
    return 'not installed';
  }
}

function run(command: string, args: readonly string[]): string {
  try {
    return execFileSync(command, args, {
      cwd: WORKSPACE_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown';
  }
}

/** Where and with what the figures were measured. */
export function environment(): Array<[string, string]> {
  const cpu = cpus();
  const dirty = run('git', ['status', '--porcelain']) !== '';
  return [
    [
      'Machine',
      `${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; ${type()} ${release()}`,
    ],
    [
      'Load average at start',
      loadavg()
        .map((l) => l.toFixed(2))
        .join(', '),
    ],
    ['Node.js / npm', `${process.version} / ${run('npm', ['--version']).split('\n').pop()}`],
    ['Commit', `${run('git', ['rev-parse', '--short', 'HEAD'])}${dirty ? ' (with uncommitted changes)' : ''}`],
    [
      'One system call',
      `${systemCallMicros().toFixed(2)} µs (getppid(2), through process.ppid, which asks the kernel each time; median of 5 rounds of 100,000)`,
    ],
  ];
}

/**
 * What one system call costs on this machine, in µs. Every HTTP request costs a server at least a
 * read(2) and a writev(2), a SQLite read two fcntl(2) locks: where a virtual machine makes each
 * system call dear, every route costs more CPU, the bare baseline's as well as the host's, and
 * the ratios move with it: two machines whose figures differ may differ here.
 */
function systemCallMicros(): number {
  const rounds: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    // A native getter: V8 cannot drop the calls.
    for (let i = 0; i < 100_000; i++) void process.ppid;
    rounds.push(Number(process.hrtime.bigint() - started) / 100_000 / 1000);
  }
  return median(rounds);
}

export const PACKAGES = [
  '@aptix/tool-contract',
  '@aptix/tool-samples',
  '@aptix/agent-sessions',
  '@aptix/host',
  'ajv',
  'typebox',
  'secure-json-parse',
  'pino',
  'awilix',
  'fastify',
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/sdk',
  '@langchain/core',
  'ai',
  '@openai/agents',
  'zod',
  'better-sqlite3',
  'pg',
  'autocannon',
] as const;

export function packageVersions(): Array<[string, string]> {
  return PACKAGES.map((name) => [name, versionOf(name)]);
}
