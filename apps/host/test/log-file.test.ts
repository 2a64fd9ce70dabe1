import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, HOST_ROOT, scratch } from './support.js';

type Line = Record<string, unknown>;

/** Every line of the log file, each of which must be one whole JSON object (none cut or interleaved). */
function linesOf(path: string): Line[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((text) => text !== '')
    .map((text) => JSON.parse(text) as Line);
}

/** Reads the file until `until` holds of its lines (the host writes a turn's lines at the turn's end). */
async function waitFor(path: string, until: (lines: Line[]) => boolean): Promise<Line[]> {
  let lines = linesOf(path);
  for (let i = 0; i < 200 && !until(lines); i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    lines = linesOf(path);
  }
  return lines;
}

describe('aptix serve logging into a regular file (stdout redirected to it), at LOG_LEVEL=info', () => {
  const space = scratch();
  const logPath = join(space.dir, 'host.log');
  let child: ChildProcess;
  let url: string;
  beforeAll(async () => {
    const fd = openSync(logPath, 'a');
    child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
      cwd: HOST_ROOT,
      env: { ...process.env, LOG_LEVEL: 'info', APTIX_DB: space.db },
      stdio: ['ignore', fd, 'pipe'],
    });
    closeSync(fd);
    const listening = (
      await waitFor(logPath, (lines) => lines.some((line) => String(line.msg).startsWith('Aptix listening')))
    ).find((line) => String(line.msg).startsWith('Aptix listening'));
    if (listening === undefined)
      throw new Error(`aptix serve did not say where it listens:\n${readFileSync(logPath, 'utf8')}`);
    url = listening.url as string;
  });
  afterAll(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
    space.cleanup();
  });

  it('writes one whole access line per request, each with its own request id, for calls answered together', async () => {
    const ids = Array.from({ length: 60 }, (_, i) => `file-req-${i}`);
    const statuses = await Promise.all(
      ids.map(async (id, i) => {
        const tool = i % 3 === 0 ? 'testing_failure_injection' : 'testing_ping_pong';
        const args = i % 3 === 0 ? { mode: 'exception', payload: `p-${id}` } : { message: id };
        const response = await fetch(`${url}/v1/tools/${tool}/invoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': id },
          body: JSON.stringify({ arguments: args }),
        });
        await response.text();
        return response.status;
      }),
    );
    expect(statuses.every((status) => status === 200)).toBe(true);
    const lines = await waitFor(
      logPath,
      (seen) =>
        seen.filter((line) => line.msg === 'request completed' && ids.includes(line.reqId as string)).length >=
        ids.length,
    );
    const completed = lines.filter((line) => line.msg === 'request completed' && ids.includes(line.reqId as string));
    expect(completed.map((line) => line.reqId).sort()).toEqual([...ids].sort());
    // The tools' own lines carry the id of the request that made them, batched with the rest.
    for (const id of ids.filter((_, i) => i % 3 === 0)) {
      expect(lines.find((line) => String(line.msg).includes(`p-${id}`))?.reqId).toBe(id);
    }
  });

  it('has written every line, the last one included, once the host has exited', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = linesOf(logPath);
    expect(lines.at(-1)?.msg).toBe('shut down');
  });
});
