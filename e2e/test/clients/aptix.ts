/**
 * The real Aptix host for the MCP client suite: `aptix serve --port 0` as a child process on a scratch
 * SQLite file (one per describe), and the plain HTTP calls a person makes to decide an approval.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll } from 'vitest';
import { WORKSPACE } from '../support.js';

/** The committed bin (not `npx aptix`, which would not pass SIGTERM on to the server it starts). */
export const APTIX_BIN = join(WORKSPACE, 'apps', 'host', 'bin', 'aptix.js');

export interface Aptix {
  /** `http://127.0.0.1:<port>`, once the host listens (read it inside a test). */
  readonly url: string;
  /** The `APTIX_DB` of this host, for an `aptix mcp` that is to share its store. */
  readonly db: string;
}

/** Waits for the host's `Aptix listening` log line and answers the URL it names; fails with the output if the host exits first. */
function listening(child: ReturnType<typeof spawn>): Promise<string> {
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output += `${line}\n`;
      if (!line.includes('Aptix listening')) return;
      const entry = JSON.parse(line) as { url?: unknown };
      if (typeof entry.url === 'string') resolve(entry.url);
    });
    child.once('exit', (code) => reject(new Error(`aptix serve exited with ${code} before listening:\n${output}`)));
  });
}

/** What a suite's host starts with besides the defaults: a fixed port (default a free one) and a configuration file (APTIX_CONFIG). */
export interface AptixOptions {
  readonly port?: number;
  readonly config?: string;
}

/** One `aptix serve` for the enclosing describe, on its own SQLite file; stopped and removed after it. */
export function aptixForSuite(options: AptixOptions = {}): Aptix {
  const dir = mkdtempSync(join(tmpdir(), 'aptix-mcp-clients-'));
  const db = `sqlite:${join(dir, 'aptix.db')}`;
  let child: ReturnType<typeof spawn> | undefined;
  let url: string | undefined;
  beforeAll(async () => {
    child = spawn(process.execPath, [APTIX_BIN, 'serve', '--port', String(options.port ?? 0)], {
      cwd: WORKSPACE,
      env: {
        ...process.env,
        APTIX_DB: db,
        LOG_LEVEL: 'info',
        ...(options.config === undefined ? {} : { APTIX_CONFIG: options.config }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await listening(child);
  });
  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((done) => child!.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get url() {
      if (url === undefined) throw new Error('the host starts in beforeAll: read its url inside a test');
      return url;
    },
    db,
  };
}

export interface Approval {
  readonly id: string;
  readonly sessionId: string | null;
  readonly toolName: string;
  readonly status: string;
  readonly result: { successful: boolean; result: Record<string, unknown> } | null;
}

/** `GET /v1/approvals/<id>`. */
export async function approvalOf(url: string, id: string): Promise<Approval> {
  const response = await fetch(`${url}/v1/approvals/${id}`);
  if (!response.ok) throw new Error(`GET /v1/approvals/${id} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Approval;
}

/** A person approves over HTTP: `POST /v1/approvals/<id>` with `{"decision":"approve"}`; answers the approval as it is then. */
export async function approve(url: string, id: string): Promise<Approval> {
  const response = await fetch(`${url}/v1/approvals/${id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ decision: 'approve' }),
  });
  if (!response.ok) throw new Error(`POST /v1/approvals/${id} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Approval;
}

/** The mode an agent session is in now, from `GET /v1/sessions/<id>`. */
export async function sessionMode(url: string, id: string): Promise<string> {
  const response = await fetch(`${url}/v1/sessions/${id}`);
  if (!response.ok) throw new Error(`GET /v1/sessions/${id} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { mode: string }).mode;
}

/** The approval id a pending answer's text names, read as a model would read it. */
export function approvalIdIn(text: string): string {
  const id = /awaits a person's approval \(approval ([0-9a-f-]{36})\)/.exec(text)?.[1];
  if (id === undefined) throw new Error(`no pending approval in: ${text}`);
  return id;
}
