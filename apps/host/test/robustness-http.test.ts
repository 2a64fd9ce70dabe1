/**
 * The host under hanging tools and hostile connections, over real HTTP (issue 9): a hanging tool is cut
 * off at its limit while the host keeps answering; 200 concurrent connections; a 413 for an oversized
 * body without reading it all. No assertion is about time: waits are bounded only so that a broken host
 * fails instead of hanging.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from './suites.js';
import { scratch, startHost, type RunningHost } from './support.js';

const FIRST_PARTY_PACKAGES = '@aptix/tool-samples,@aptix/tool-mode-catalog,@aptix/tool-mode-change';
const STACK = /\n\s+at\s|\bat \S+:\d+:\d+/;

// ---------------------------------------------------------------------------------------------
// Time-outs, connections, oversized bodies
// ---------------------------------------------------------------------------------------------

/** A tool package of two hanging tools, loaded by path as any third-party package would be. */
function writeHangingTools(dir: string, timeoutMs: number): string {
  const folder = join(dir, 'hanging-tools');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'package.json'),
    JSON.stringify({ name: 'hanging-tools', version: '1.0.0', type: 'module', main: 'index.js' }),
  );
  const schema = (name: string) =>
    JSON.stringify({
      type: 'function',
      name,
      description: 'Never answers.',
      parameters: {
        type: 'object',
        properties: { label: { type: 'string', description: 'A label for the log.' } },
        required: ['label'],
        additionalProperties: false,
      },
    });
  writeFileSync(
    join(folder, 'index.js'),
    `// Never answers; says in the log when its signal aborts.
    export class HangTool {
      static ToolName = 'fixture_hang';
      static ToolUsageMetadata = 'Never answers; for time-out tests.';
      static TimeoutMs = ${timeoutMs};
      // It changes nothing, so cutting it off is harmless: TIMEOUT, not OUTCOME_UNKNOWN.
      static ToolAnnotations = { readOnlyHint: true };
      static getSchema() { return ${schema('fixture_hang')}; }
      constructor({ logger }) { this.logger = logger; }
      name = 'fixture_hang';
      isToolFullyExecutedOnServer = true;
      execute(argumentsJson, context, signal) {
        const { label } = JSON.parse(argumentsJson);
        return new Promise(() => {
          signal.addEventListener('abort', () => this.logger.addError('[fixture_hang_Aborted]', 'its signal aborted', [['Label', label]]), { once: true });
        });
      }
    }
    // Never answers, and ignores its signal altogether.
    export class StubbornTool {
      static ToolName = 'fixture_stubborn';
      static ToolUsageMetadata = 'Never answers, ignores its signal; for time-out tests.';
      static TimeoutMs = ${timeoutMs};
      static ToolAnnotations = { readOnlyHint: true };
      static getSchema() { return ${schema('fixture_stubborn')}; }
      constructor() {}
      name = 'fixture_stubborn';
      isToolFullyExecutedOnServer = true;
      execute() { return new Promise(() => {}); }
    }
    export const tools = [HangTool, StubbornTool];`,
  );
  return folder;
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!check()) throw new Error(`gave up waiting for ${what}`);
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

describe('time-outs, connections and oversized bodies, over real HTTP', () => {
  const space = scratch();
  const LIMIT_MS = 3_000;
  let host: RunningHost;
  beforeAll(async () => {
    const tools = writeHangingTools(space.dir, LIMIT_MS);
    host = await startHost({ env: { APTIX_DB: space.db, APTIX_TOOL_PACKAGES: `${tools},${FIRST_PARTY_PACKAGES}` } });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it('cuts hanging tools off at their limit, and answers other calls meanwhile', async () => {
    let settled = 0;
    const hanging = Array.from({ length: 20 }, (_, i) => {
      const tool = i % 2 === 0 ? 'fixture_hang' : 'fixture_stubborn';
      return postJson(host, `/v1/tools/${tool}/invoke`, { arguments: { label: `hang-${i}` } }).finally(() => settled++);
    });
    // While all twenty hang, the host answers everything else, at once.
    for (let i = 0; i < 30; i++) {
      const answer = await postJson(host, '/v1/tools/testing_ping_pong/invoke', {
        arguments: { message: `ping ${i}` },
      });
      expect(answer.body).toMatchObject({ successful: true, result: { reply: `pong: ping ${i}` } });
    }
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
    expect(settled, 'no hanging call may be answered before its limit').toBe(0);

    for (const answer of await Promise.all(hanging)) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        successful: false,
        result: null,
        errors: [{ code: 'TIMEOUT', message: expect.stringContaining(`within ${LIMIT_MS} ms`) }],
      });
    }
    // The tool that listens was told, through its signal, for every call.
    await waitFor(
      () => host.logs.filter((line) => line.tag === '[fixture_hang_Aborted]').length === 10,
      'the aborted lines of fixture_hang',
    );
    expect(
      new Set(host.logs.filter((line) => line.tag === '[fixture_hang_Aborted]').map((line) => line.Label)),
    ).toEqual(new Set(Array.from({ length: 10 }, (_, i) => `hang-${i * 2}`)));
  });

  it('holds 200 concurrent connections, each with a call in flight', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 200 });
    const ports = new Set<number>();
    const { hostname, port } = new URL(host.url);
    const body = JSON.stringify({ arguments: { milliseconds: 300 } });
    try {
      const answers = await Promise.all(
        Array.from(
          { length: 200 },
          () =>
            new Promise<{ status: number; json: any }>((resolve, reject) => {
              const req = httpRequest(
                {
                  hostname,
                  port,
                  agent,
                  method: 'POST',
                  path: '/v1/tools/testing_delay/invoke',
                  headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
                },
                (res) => {
                  let text = '';
                  res.on('data', (chunk: Buffer) => (text += chunk.toString()));
                  res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
                },
              );
              req.on('socket', (socket) => socket.once('connect', () => ports.add(socket.localPort!)));
              req.on('error', reject);
              req.end(body);
            }),
        ),
      );
      expect(ports.size, 'every call had a connection of its own').toBe(200);
      for (const answer of answers)
        expect(answer).toMatchObject({
          status: 200,
          json: { successful: true, result: { wasCancelled: false, requestedMs: 300 } },
        });
    } finally {
      agent.destroy();
    }
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  /**
   * Streams up to `totalMiB` of body and reports the answer and how much was written before the server
   * closed the connection: a server that buffered the body would read it all first.
   */
  function streamBody(
    headers: Record<string, string>,
    totalMiB: number,
    options: { hold?: boolean } = {},
  ): Promise<{ status: number | undefined; body: string; writtenMiB: number; closedByServer: boolean }> {
    const { hostname, port } = new URL(host.url);
    return new Promise((resolve) => {
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let written = 0;
      let status: number | undefined;
      let body = '';
      let done = false;
      const finish = (closedByServer: boolean) => {
        if (done) return;
        done = true;
        resolve({ status, body, writtenMiB: written / 2 ** 20, closedByServer });
      };
      const req = httpRequest({
        hostname,
        port,
        method: 'POST',
        path: '/v1/tools/testing_ping_pong/invoke',
        headers: { 'content-type': 'application/json', ...headers },
      });
      let reset = false;
      req.on('response', (res: IncomingMessage) => {
        status = res.statusCode;
        res.on('data', (data: Buffer) => (body += data.toString()));
        res.on('error', () => undefined);
      });
      // A write refused (EPIPE, ECONNRESET): the server closed the connection. Wait for 'close', which
      // comes once whatever part of the answer arrived has been read.
      req.on('error', () => (reset = true));
      req.on('close', () => finish(reset || written < totalMiB * 2 ** 20));
      req.write('{"arguments":{"message":"');
      const pump = () => {
        while (!done && !reset && written < totalMiB * 2 ** 20) {
          written += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        // With `hold`, the body is left unfinished: only the host can end the exchange.
        if (!done && !reset && !options.hold) req.end('"}}');
      };
      pump();
    });
  }

  it.each([
    ['with no Content-Length (chunked)', { 'transfer-encoding': 'chunked' }, 1.25],
    ['whose Content-Length announces 1 GiB', { 'content-length': String(2 ** 30) }, 0.05],
  ])('answers a body %s that goes over the limit with 413', async (_label, headers, sentMiB) => {
    // Just over the limit (or, with the size announced, hardly anything), then the client waits: the host
    // has read all that was sent, so its answer arrives whole.
    const outcome = await streamBody(headers, sentMiB, { hold: true });
    expect(outcome.status).toBe(413);
    expect(JSON.parse(outcome.body)).toEqual({
      error: { code: 'BODY_TOO_LARGE', message: expect.stringContaining('1048576 bytes') },
    });
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  it.each([
    ['with no Content-Length (chunked)', { 'transfer-encoding': 'chunked' }],
    ['whose Content-Length announces 1 GiB', { 'content-length': String(2 ** 30) }],
  ])('cuts off a 256 MiB body %s after reading about the limit, holding none of it', async (_label, headers) => {
    const before = rssMiB(host.child.pid!);
    const outcome = await streamBody(headers, 256);
    // The host stopped reading at the 1 MiB limit and closed the connection: the client could push only
    // what fits in the socket buffers in between. A host buffering the body would have taken all 256 MiB.
    expect(outcome.closedByServer, 'the host closed the connection rather than read the rest').toBe(true);
    expect(outcome.writtenMiB).toBeLessThan(32);
    // Its 413 may be overtaken by the connection reset (the unread body is still in the host's buffers).
    if (outcome.status !== undefined) expect(outcome.status).toBe(413);
    expect(rssMiB(host.child.pid!) - before, 'the host did not hold the body in memory').toBeLessThan(64);
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  it('survives a body longer than its Content-Length says, answering 400 if anything', async () => {
    const outcome = await streamBody({ 'content-length': '100' }, 8);
    if (outcome.status !== undefined) expect(outcome.status).toBe(400);
    expect(outcome.body).not.toMatch(STACK);
    expect(outcome.writtenMiB).toBeLessThan(8);
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });
});
