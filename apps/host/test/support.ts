import { afterAll, beforeAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { detect } from 'detect-port';

export const HOST_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(HOST_ROOT, 'bin', 'aptix.js');

/** A scratch folder with its own SQLite file; removed by `cleanup`. */
export function scratch(): { dir: string; db: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'aptix-host-'));
  return { dir, db: `sqlite:${join(dir, 'aptix.db')}`, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as the one JSON document it must hold. */
  json<T = Record<string, unknown>>(): T;
}

/**
 * Runs `aptix <args>` as a child process, stdout piped (so not a terminal: JSON mode). With `timeoutMs`,
 * a process still running then is killed (code null): a command expected to refuse to start, which
 * starts instead, then fails its test rather than outliving it.
 */
export function runCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? HOST_ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    const timer =
      options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout,
        stderr,
        json<T>() {
          const lines = stdout.trim().split('\n');
          if (lines.length !== 1)
            throw new Error(
              `stdout must hold exactly one JSON document, got ${lines.length} lines:\n${stdout}\nstderr:\n${stderr}`,
            );
          return JSON.parse(lines[0]!) as T;
        },
      });
    });
  });
}

export interface RunningHost {
  readonly url: string;
  readonly child: ChildProcess;
  /** Every log line the host wrote to stdout, parsed. */
  readonly logs: Array<Record<string, unknown>>;
  /** Everything the host wrote to stdout and stderr so far, as text. */
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Sends SIGTERM and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `aptix serve --port 0` and waits for the line that says where it listens. */
export function startHost(
  options: { env?: NodeJS.ProcessEnv; args?: readonly string[]; cwd?: string } = {},
): Promise<RunningHost> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...(options.args ?? [])], {
      cwd: options.cwd ?? HOST_ROOT,
      env: { ...process.env, LOG_LEVEL: 'info', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const logs: Array<Record<string, unknown>> = [];
    let stderr = '';
    let stdout = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    let ready = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (
        !ready &&
        typeof entry.url === 'string' &&
        typeof entry.msg === 'string' &&
        entry.msg.startsWith('Aptix listening')
      ) {
        ready = true;
        resolve({
          url: entry.url,
          child,
          logs,
          output: () => stdout + stderr,
          exited,
          async stop(signal = 'SIGTERM') {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    });
    void exited.then((code) => {
      if (!ready) reject(new Error(`aptix serve exited with ${code} before listening:\n${stderr}`));
    });
  });
}

/** The PostgreSQL server the multi-host tests use; `APTIX_TEST_PG_URL` overrides it. */
export const PG_URL = process.env.APTIX_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Whether PostgreSQL answers. Outside CI an unreachable server skips `what` with a loud notice;
 * with `CI=true` it fails the run, so CI never passes by skipping.
 */
export async function postgresAvailable(what: string): Promise<boolean> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  let reachable = false;
  try {
    await client.connect();
    reachable = true;
  } catch {
    // reported below
  } finally {
    await client.end().catch(() => {});
  }
  if (!reachable) {
    if (process.env.CI === 'true')
      throw new Error(
        `PostgreSQL is not reachable at ${PG_URL}, and CI=true requires it. Start it, or set APTIX_TEST_PG_URL.`,
      );
    console.warn(
      `\n!!! PostgreSQL is not reachable at ${PG_URL}: ${what} SKIPPED. Start PostgreSQL or set APTIX_TEST_PG_URL to run it. !!!\n`,
    );
  }
  return reachable;
}

/** A fresh schema on the test server, as an APTIX_DB URL, and how to drop it. */
export function postgresSchema(prefix: string): { db: string; dispose(): Promise<void> } {
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  return {
    db: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`,
    async dispose() {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}

/**
 * One `aptix serve` on its own SQLite file for the enclosing `describe`: started before its tests,
 * stopped (and the file removed) after them. Read `.url` inside the tests.
 */
export function hostForSuite(options: { env?: NodeJS.ProcessEnv; args?: readonly string[] } = {}): {
  readonly url: string;
  readonly host: RunningHost;
  readonly db: string;
} {
  const space = scratch();
  let host: RunningHost | undefined;
  beforeAll(async () => {
    host = await startHost({ ...options, env: { APTIX_DB: space.db, ...options.env } });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });
  return {
    get host() {
      if (host === undefined) throw new Error('the host starts in beforeAll: use it inside a test');
      return host;
    },
    get url() {
      return this.host.url;
    },
    db: space.db,
  };
}

/** Starts `aptix serve` with these configuration-file fields (written to a scratch config file) on a scratch SQLite store. */
export async function startHostWithConfig(
  fields: Record<string, unknown>,
  env: NodeJS.ProcessEnv = {},
): Promise<{ host: RunningHost; space: ReturnType<typeof scratch> }> {
  const space = scratch();
  const file = join(space.dir, 'aptix.config.json');
  writeFileSync(file, JSON.stringify(fields));
  const host = await startHost({ args: ['--config', file], env: { APTIX_DB: space.db, ...env } });
  return { host, space };
}

export interface RawResponse {
  readonly status: number;
  readonly head: string;
  readonly body: string;
  /** The body parsed, when it is JSON. */
  readonly json: Record<string, any> | undefined;
}

/**
 * Sends `text` as it is over a new TCP connection (a request fetch would refuse to send: duplicate
 * headers, absolute-form targets, undecodable paths) and reads the answer until the server closes.
 */
export function rawHttp(
  url: string,
  text: string | Buffer,
  options: { halfClose?: boolean } = {},
): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    // halfClose: false keeps our side open until the server closes, as a browser does; a streamed
    // reply (a static file) is dropped by Node when the client has already ended its side.
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ''), () =>
      options.halfClose === false ? socket.write(text) : socket.end(text),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const head = split === -1 ? raw : raw.slice(0, split);
      const body = split === -1 ? '' : raw.slice(split + 4);
      let json: Record<string, any> | undefined;
      try {
        json = JSON.parse(body) as Record<string, any>;
      } catch {
        json = undefined;
      }
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), head, body, json });
    });
  });
}

/** A GET (or another method) as raw text, with `Connection: close` so the answer ends the exchange. */
export function rawRequest(
  url: string,
  method: string,
  target: string,
  headers: Record<string, string | string[]> = {},
  body?: string,
): string {
  const lines = [`${method} ${target} HTTP/1.1`];
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'host')) lines.push(`Host: ${new URL(url).host}`);
  for (const [name, value] of Object.entries(headers))
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`);
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  lines.push('Connection: close');
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}

/** A TCP port free on loopback right now (for a server that must come back on the same port). */
export const freePort = (): Promise<number> => detect(0);

/** Waits (bounded) for a log line of the host that `match` accepts. */
export async function logLine(
  host: RunningHost,
  match: (entry: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  for (let i = 0; i < 300; i++) {
    const found = host.logs.find(match);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no such log line; the host logged:\n${host.logs.map((entry) => JSON.stringify(entry)).join('\n')}`);
}

/** A JSON-RPC answer as a raw MCP call reads it. */
export interface RawRpcAnswer {
  readonly id?: string | number;
  readonly result?: any;
  readonly error?: { code: number; message: string; data?: any };
  /** The HTTP status the answer came with. */
  readonly status?: number;
}

/**
 * One raw 2026-07-28 `tools/call` over HTTP (a test can hold, alter or forge what an SDK would not send:
 * the requestState, the inputResponses), its answer read from JSON or from the last event of a stream.
 * `params.arguments` and `params.inputResponses` go as JSON.stringify writes them, so an own "__proto__" key stays one.
 */
export async function rawToolsCall(
  url: string,
  params: Record<string, unknown>,
  options: { path?: string; key?: string; capabilities?: Record<string, unknown> } = {},
): Promise<RawRpcAnswer> {
  const response = await fetch(`${url}${options.path ?? '/mcp'}`, {
    method: 'POST',
    headers: {
      ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
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
          'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? { elicitation: { form: {} } },
        },
      },
    }),
  });
  const text = await response.text();
  const answer = text.startsWith('{')
    ? (JSON.parse(text) as RawRpcAnswer)
    : (JSON.parse(
        text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5))
          .pop()!,
      ) as RawRpcAnswer);
  return { ...answer, status: response.status };
}
