/**
 * Shared by the suites that load hostile tool packages (test/fixtures/broken) into a real `aptix`
 * process: config files, failed commands, calls and health checks. Waits are bounded only so that a
 * broken host fails instead of hanging; no assertion is about time.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, HOST_ROOT, type RunningHost } from './support.js';

export const BROKEN = fileURLToPath(new URL('./fixtures/broken/', import.meta.url));
export const FIRST_PARTY = ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change'];
/** A stack trace, which no caller may see. */
export const STACK = /\n\s+at\s|\bat \S+:\d+:\d+/;

export type Entry = string | Record<string, unknown>;

/** A config file in `dir` loading the first-party packages and `entries` (fixture names are made paths). */
export function writeConfig(
  dir: string,
  name: string,
  entries: readonly Entry[],
  extra: Record<string, unknown> = {},
): string {
  const pathOf = (entry: string) => (entry.startsWith('@aptix/') ? entry : join(BROKEN, entry));
  const toolPackages = [
    ...FIRST_PARTY,
    ...entries.map((entry) =>
      typeof entry === 'string' ? pathOf(entry) : { ...entry, package: pathOf(entry.package as string) },
    ),
  ];
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ db: `sqlite:${join(dir, `${name}.db`)}`, toolPackages, ...extra }));
  return file;
}

export interface FailedRun {
  /** The exit code; null when the process did not exit by itself (the guard below killed it). */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `aptix --config <file> <args>` that must end by itself: its exit code and what it wrote. Killed with
 * SIGTERM if it ever listens, and with SIGKILL if it has not exited after `guardMs` (a hung process
 * then fails the test with code null). `onStderr` sees what it writes, to act on a line.
 */
export function runToEnd(
  config: string,
  args: readonly string[],
  options: {
    env?: NodeJS.ProcessEnv;
    guardMs?: number;
    onStderr?: (text: string, child: ReturnType<typeof spawn>) => void;
  } = {},
): Promise<FailedRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, '--config', config, ...args], {
      cwd: HOST_ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const guard = setTimeout(() => child.kill('SIGKILL'), options.guardMs ?? 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('Aptix listening')) child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      options.onStderr?.(stderr, child);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** `aptix serve --config <file>` that must fail at start-up. */
export function failedServe(config: string): Promise<FailedRun> {
  return runToEnd(config, ['serve', '--port', '0']);
}

export interface Invoked {
  readonly status: number;
  readonly text: string;
  readonly body: { successful: boolean; result: any; errors: Array<{ code?: string; message: string }> };
}

export async function invoke(host: RunningHost, name: string, args: unknown = {}): Promise<Invoked> {
  const response = await fetch(`${host.url}/v1/tools/${name}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: args }),
  });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) };
}

export async function healthy(host: RunningHost): Promise<boolean> {
  const response = await fetch(`${host.url}/healthz`);
  return response.status === 200 && ((await response.json()) as { status: string }).status === 'ok';
}

/** Waits (bounded) until every worker the host replaced has its successor ready. */
export async function everyWorkerReplaced(host: RunningHost): Promise<void> {
  const count = (start: string) =>
    host.logs.filter((entry) => typeof entry.msg === 'string' && entry.msg.includes(start)).length;
  for (let i = 0; i < 300 && count('a fresh worker is ready') < count('replacing a worker'); i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Every line of `text` that is a JSON object (log lines on stdout, and those written to stderr before the logger exists). */
export function jsonLines(text: string): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    try {
      const parsed = JSON.parse(line) as unknown;
      if (parsed !== null && typeof parsed === 'object') lines.push(parsed as Record<string, unknown>);
    } catch {
      // not a log line
    }
  }
  return lines;
}
