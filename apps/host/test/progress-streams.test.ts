/**
 * Issue 16 and 14: a tool's progress and caller-facing log entries reach HTTP clients that ask for
 * `text/event-stream`, and reach every client from a package isolated in worker threads. A real `aptix
 * serve` with a real config file, real sockets, the real MCP SDK client. No assertion is about time.
 */
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLine, startHostWithConfig, type RunningHost } from './support.js';

const BROKEN = fileURLToPath(new URL('./fixtures/broken/', import.meta.url));
const KEY = 'progress-streams-test-key-0123456789';
const OTHER_KEY = 'progress-streams-other-key-0123456789';
/** Decides approvals: another principal than the one that asks (separation of duties), and one no test rate-limits. */
const APPROVER_KEY = 'progress-streams-approver-key-012345';
const AUTH = { authorization: `Bearer ${KEY}` };

interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** Server-sent events as the specification reads them: `data:` lines joined with a line break. */
function parseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\n\n/)) {
    if (block.trim() === '') continue;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    events.push({ event, data: data.join('\n') });
  }
  return events;
}

async function invokeStream(host: RunningHost, name: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${host.url}/v1/tools/${name}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...AUTH, ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const streamed = response.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
  return {
    status: response.status,
    headers: response.headers,
    text,
    events: streamed ? parseEvents(text) : [],
    json: streamed ? undefined : (JSON.parse(text) as Record<string, any>),
  };
}

async function invokeJson(host: RunningHost, name: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${host.url}/v1/tools/${name}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...AUTH, ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: (await response.json()) as Record<string, any>,
  };
}

/**
 * The most events the gates let through in a call that lasted `ms` (the burst, then the rate, plus the
 * one sent at the end): a flood of hundreds of thousands must come out within it, however slow the machine.
 */
function wireBounds(ms: number): { progress: number; logs: number } {
  const seconds = ms / 1000;
  return { progress: 16 + Math.ceil(20 * seconds) + 1, logs: 32 + Math.ceil(20 * seconds) + 1 };
}

const progressOf = (events: readonly SseEvent[]) =>
  events
    .filter((e) => e.event === 'progress')
    .map((e) => JSON.parse(e.data) as { progress: number; total?: number; message?: string });

let host: RunningHost;
let cleanup: () => void;
beforeAll(async () => {
  const started = await startHostWithConfig({
    apiKeys: [`tester=${KEY}`, `other=${OTHER_KEY}`, `approver=${APPROVER_KEY}`],
    rateLimit: { max: 300, timeWindowMs: 600_000 },
    toolPackages: [
      '@aptix/tool-samples',
      '@aptix/tool-mode-catalog',
      '@aptix/tool-mode-change',
      join(BROKEN, 'huge-result'),
      fileURLToPath(new URL('./fixtures/progress-gated/', import.meta.url)),
      { package: join(BROKEN, 'isolated'), isolation: 'worker', workers: 1 },
    ],
    modes: { extend: { general: ['iso_progress', 'iso_progress_attack', 'iso_echo'] } },
  });
  host = started.host;
  cleanup = started.space.cleanup;
}, 60_000);
afterAll(async () => {
  await host?.stop();
  cleanup?.();
});

describe('POST /v1/tools/:name/invoke with Accept: text/event-stream', () => {
  it("streams testing_delay's progress, then one result event carrying the JSON reply's envelope", async () => {
    const streamed = await invokeStream(host, 'testing_delay', {
      arguments: { milliseconds: 300 },
      context: { conversationId: 'c-1' },
    });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(streamed.headers.get('x-request-id')).toBeTruthy();
    const progress = progressOf(streamed.events);
    expect(progress[0]).toEqual({ progress: 0, total: 300, message: 'waiting 300 ms' });
    expect(progress.at(-1)).toMatchObject({ progress: 300, total: 300 });
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    expect(streamed.events.filter((e) => e.event === 'result')).toHaveLength(1);
    expect(streamed.events.at(-1)!.event).toBe('result');
    const result = JSON.parse(streamed.events.at(-1)!.data);

    const plain = await invokeJson(host, 'testing_delay', {
      arguments: { milliseconds: 1 },
      context: { conversationId: 'c-1' },
    });
    expect(plain.status).toBe(200);
    expect(Object.keys(result)).toEqual(Object.keys(plain.body));
    expect(result).toMatchObject({
      successful: true,
      errors: [],
      result: { wasCancelled: false, requestedMs: 300, conversationId: 'c-1' },
    });
  });

  it('describes the event stream in the OpenAPI document', async () => {
    const spec = (await (await fetch(`${host.url}/openapi.json`, { headers: AUTH })).json()) as any;
    const answer = spec.paths['/v1/tools/{name}/invoke'].post.responses['200'];
    expect(Object.keys(answer.content)).toEqual(['application/json', 'text/event-stream']);
    expect(answer.content['text/event-stream'].schema.description).toContain('event: result');
    expect(answer.content['application/json'].schema.properties.successful.type).toBe('boolean');
  });

  it('keeps JSON the default, and for a client that refuses the stream (q=0)', async () => {
    const plain = await invokeJson(host, 'testing_ping_pong', { arguments: { message: 'hi' } });
    expect(plain.contentType).toMatch(/^application\/json/);
    const refused = await invokeJson(
      host,
      'testing_ping_pong',
      { arguments: { message: 'hi' } },
      { accept: 'text/event-stream;q=0, application/json' },
    );
    expect(refused.contentType).toMatch(/^application\/json/);
    expect(refused.body.successful).toBe(true);
  });

  it('streams a failed result in the JSON envelope, and a result whose JSON spans lines as several data lines', async () => {
    const failed = await invokeStream(host, 'testing_calculator', { arguments: { operation: 'divide', a: 1, b: 0 } });
    expect(failed.events.map((e) => e.event)).toEqual(['result']);
    const body = JSON.parse(failed.events[0]!.data);
    expect(body).toMatchObject({ successful: false, result: null });
    expect(body.errors[0].code).toBeTruthy();
    // An echo of text holding line breaks: the client's joined data is the JSON text, exactly.
    const echoed = await invokeStream(host, 'iso_echo', { arguments: { text: 'one\ntwo\r\nthree\rfour' } });
    expect(JSON.parse(echoed.events.at(-1)!.data).result.echo).toBe('one\ntwo\r\nthree\rfour');
  });

  it('answers a call refused before any tool runs as plain JSON with its status: unknown tool, no key, bad body, tool outside the mode', async () => {
    const unknown = await invokeStream(host, 'no_such_tool', { arguments: {} });
    expect(unknown.status).toBe(404);
    expect(unknown.json!.error.code).toBe('TOOL_NOT_FOUND');
    const noKey = await invokeStream(host, 'testing_delay', { arguments: { milliseconds: 1 } }, { authorization: '' });
    expect(noKey.status).toBe(401);
    const wrongKey = await invokeStream(
      host,
      'testing_delay',
      { arguments: { milliseconds: 1 } },
      { authorization: 'Bearer not-the-key-at-all-0123456789' },
    );
    expect(wrongKey.status).toBe(401);
    const badBody = await invokeStream(host, 'testing_delay', { arguments: { milliseconds: 1 }, extra: true });
    expect(badBody.status).toBe(400);
    const session = (await (
      await fetch(`${host.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...AUTH },
        body: '{"mode":"general"}',
      })
    ).json()) as { id: string };
    const outside = await invokeStream(host, 'testing_delay', {
      arguments: { milliseconds: 1 },
      context: { sessionId: session.id },
    });
    expect(outside.status).toBe(403);
    expect(outside.json!.error.code).toBe('TOOL_NOT_IN_MODE');
  });

  it("holds the tool's time-out and the result-size bound: TIMEOUT and RESULT_TOO_LARGE arrive as the result event", async () => {
    const busy = await invokeStream(host, 'iso_busy_loop', { arguments: {} });
    expect(busy.status).toBe(200);
    expect(JSON.parse(busy.events.at(-1)!.data).errors[0].code).toBe('TIMEOUT');
    const huge = await invokeStream(host, 'broken_huge_result', { arguments: {} });
    expect(huge.events.map((e) => e.event)).toEqual(['result']);
    expect(JSON.parse(huge.events[0]!.data).errors[0].code).toBe('RESULT_TOO_LARGE');
    expect(huge.text.length).toBeLessThan(10_000);
  });

  it('cancels the call when the client hangs up mid-stream, and logs how the call ended', async () => {
    const abort = new AbortController();
    const response = await fetch(`${host.url}/v1/tools/testing_delay/invoke`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...AUTH,
        'x-request-id': 'hang-up-1',
      },
      body: JSON.stringify({ arguments: { milliseconds: 30_000 } }),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('event: progress');
    abort.abort();
    const line = await logLine(
      host,
      (entry) => entry.reqId === 'hang-up-1' && entry.msg === 'the client hung up before a streamed call answered',
    );
    expect(line.outcome).toBe('cancelled');
    expect(await healthy()).toBe(true);
  });

  it('cancels a call whose client hangs up before any event; a tool that does not stop is logged as OUTCOME_UNKNOWN, never as done', async () => {
    // iso_stubborn reports nothing and ignores its signal: it settles 1.5 s in, past the cancel grace.
    const abort = new AbortController();
    const pending = fetch(`${host.url}/v1/tools/iso_stubborn/invoke`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...AUTH,
        'x-request-id': 'hang-up-2',
      },
      body: '{"arguments":{"text":"hang-up-2"}}',
      signal: abort.signal,
    }).catch((error: unknown) => error);
    await logLine(host, (entry) => entry.msg === 'iso_stubborn started' && entry.marker === 'hang-up-2');
    abort.abort();
    await pending;
    const line = await logLine(
      host,
      (entry) => entry.reqId === 'hang-up-2' && entry.msg === 'the client hung up before a streamed call answered',
    );
    expect(line.outcome).toBe('OUTCOME_UNKNOWN');
    expect(await healthy()).toBe(true);
  });

  it('delivers everything to a client that reads slowly, while the host keeps serving others', async () => {
    // About 800 KB of result: more than the socket's buffers hold while the client does not read.
    const text = 'x'.repeat(800_000);
    const { hostname, port } = new URL(host.url);
    const body = JSON.stringify({ arguments: { text } });
    const chunks: Buffer[] = [];
    const done = new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          hostname,
          port,
          path: '/v1/tools/iso_echo/invoke',
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...AUTH },
        },
        (res) => {
          res.pause();
          // Others are served while this client reads nothing.
          void (async () => {
            for (let i = 0; i < 5; i++) expect(await healthy()).toBe(true);
            expect(
              (await invokeJson(host, 'testing_ping_pong', { arguments: { message: 'meanwhile' } })).body.successful,
            ).toBe(true);
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve(res.statusCode ?? 0));
            res.resume();
          })().catch(reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(await done).toBe(200);
    const events = parseEvents(Buffer.concat(chunks).toString());
    expect(events.map((e) => e.event)).toEqual(['result']);
    expect(JSON.parse(events[0]!.data).result.echo).toBe(text);
  });

  it('bounds a flood of progress and logs from an isolated tool, drops malformed and late reports, cuts huge messages', async () => {
    const started = performance.now();
    const streamed = await invokeStream(host, 'iso_progress_attack', { arguments: {} });
    const bounds = wireBounds(performance.now() - started);
    expect(streamed.status).toBe(200);
    const progress = progressOf(streamed.events);
    // 200,000 reports: a burst, then a bounded rate; the newest value last, before the result.
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.length).toBeLessThanOrEqual(bounds.progress);
    expect(progress[0]).toEqual({ progress: 1, message: 'x'.repeat(1000) });
    expect(progress.at(-1)!.progress).toBe(200_000);
    for (const report of progress)
      expect(Number.isFinite(report.progress) && (report.total === undefined || Number.isFinite(report.total))).toBe(
        true,
      );
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    const logs = streamed.events
      .filter((e) => e.event === 'log')
      .map((e) => JSON.parse(e.data) as { level: string; message: string; data?: unknown });
    expect(logs.length).toBeGreaterThan(2);
    expect(logs.length).toBeLessThanOrEqual(bounds.logs);
    expect(logs[0]).toEqual({
      level: 'info',
      message: 'a cycle',
      data: '(left out: the data could not be serialised as JSON)',
    });
    expect(logs[1]!.message).toHaveLength(4000);
    expect(String(logs[1]!.data)).toMatch(/^\(left out: 1000002 characters of JSON/);
    expect(JSON.stringify(streamed.events)).not.toContain('after the result');
    expect(streamed.events.at(-1)!.event).toBe('result');
    expect(JSON.parse(streamed.events.at(-1)!.data).result).toEqual({ attacked: true });
    // The late reports (100 ms after the answer) are dropped in the worker and the host alike.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await healthy()).toBe(true);
  });

  it('streams the progress of a tool with an approval policy when the call runs at once; a call that waits answers 202 as JSON', async () => {
    const now = await invokeStream(host, 'gated_progress', { arguments: { steps: 3 } });
    expect(progressOf(now.events)).toEqual([1, 2, 3].map((i) => ({ progress: i, total: 3 })));
    expect(JSON.parse(now.events.at(-1)!.data)).toEqual({ successful: true, result: { counted: 3 }, errors: [] });
    const waits = await invokeStream(host, 'gated_progress', { arguments: { steps: 500 } });
    expect(waits.status).toBe(202);
    expect(waits.json).toMatchObject({ status: 'pending_approval', toolName: 'gated_progress' });
  });

  it('answers 429 as plain JSON once the rate limit is reached', async () => {
    let status = 0;
    for (let i = 0; i < 400 && status !== 429; i++) {
      const response = await fetch(`${host.url}/v1/tools/testing_ping_pong/invoke`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          authorization: `Bearer ${OTHER_KEY}`,
        },
        body: '{"arguments":{"message":"hi"}}',
      });
      status = response.status;
      await response.arrayBuffer();
    }
    expect(status).toBe(429);
    const limited = await invokeStream(
      host,
      'testing_ping_pong',
      { arguments: { message: 'hi' } },
      { authorization: `Bearer ${OTHER_KEY}` },
    );
    expect(limited.status).toBe(429);
    expect(limited.json!.error.code).toBe('RATE_LIMITED');
  });
});

describe('an isolated package: progress and log entries cross the worker boundary', () => {
  async function legacyClient(): Promise<Client> {
    const client = new Client({ name: 'aptix-progress-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), { requestInit: { headers: AUTH } }),
    );
    return client;
  }

  it('reaches a real MCP SDK client as progress and log notifications', async () => {
    const client = await legacyClient();
    try {
      const logs: Array<{ level: string; data: unknown }> = [];
      client.setNotificationHandler(
        LoggingMessageNotificationSchema,
        (notification) => void logs.push(notification.params),
      );
      await client.setLoggingLevel('info');
      const reports: Array<{ progress: number; total?: number; message?: string }> = [];
      const result = await client.callTool({ name: 'iso_progress', arguments: { steps: 3 } }, undefined, {
        onprogress: (progress) => reports.push(progress),
      });
      expect(result.isError).toBeFalsy();
      const answer = JSON.parse((result.content as Array<{ text: string }>)[0]!.text);
      expect(answer).toMatchObject({ steps: 3, heard: { progress: 'function', log: 'function' } });
      expect(answer.threadId).toBeGreaterThan(0);
      expect(reports).toEqual([0, 1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i}` })));
      expect(logs.map((entry) => entry.data)).toEqual(
        [0, 1, 2, 3].map((i) => ({ message: `step ${i}`, data: { step: i, threadId: answer.threadId } })),
      );
    } finally {
      await client.close();
    }
  });

  it('reaches a 2026-07-28 client (the v2 SDK) as progress notifications', async () => {
    const client = new ModernClient(
      { name: 'aptix-progress-test-v2', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new ModernTransport(new URL(`${host.url}/mcp`), { requestInit: { headers: AUTH } }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const reports: Array<{ progress: number; total?: number; message?: string }> = [];
      const result = await client.callTool(
        { name: 'iso_progress', arguments: { steps: 2 } },
        { onprogress: (progress) => reports.push(progress) },
      );
      expect(result.isError).toBeFalsy();
      expect(reports).toEqual([0, 1, 2].map((i) => ({ progress: i, total: 2, message: `step ${i}` })));
    } finally {
      await client.close();
    }
  });

  it('gives the tool only the functions its caller listens through', async () => {
    const client = await legacyClient();
    try {
      const result = await client.callTool({ name: 'iso_progress', arguments: { steps: 1 } });
      // No progress token: no reportProgress. A 2025 session hears log entries at info until it sets a level.
      expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text).heard).toEqual({
        progress: 'undefined',
        log: 'function',
      });
    } finally {
      await client.close();
    }
    // Over HTTP without the stream, the context has neither function.
    const plain = await invokeJson(host, 'iso_progress', { arguments: { steps: 1 } });
    expect(plain.body.result.heard).toEqual({ progress: 'undefined', log: 'undefined' });
  });

  it('bounds a flood over MCP too, and nothing arrives after the result', async () => {
    const client = await legacyClient();
    try {
      const logs: unknown[] = [];
      client.setNotificationHandler(
        LoggingMessageNotificationSchema,
        (notification) => void logs.push(notification.params),
      );
      await client.setLoggingLevel('info');
      const reports: Array<{ progress: number; message?: string }> = [];
      const started = performance.now();
      const result = await client.callTool({ name: 'iso_progress_attack', arguments: {} }, undefined, {
        onprogress: (progress) => reports.push(progress),
      });
      const bounds = wireBounds(performance.now() - started);
      expect(result.isError).toBeFalsy();
      expect(reports.length).toBeLessThanOrEqual(bounds.progress);
      expect(reports.at(-1)!.progress).toBe(200_000);
      expect(reports[0]!.message).toHaveLength(1000);
      expect(logs.length).toBeLessThanOrEqual(bounds.logs);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(JSON.stringify([reports, logs])).not.toContain('after the result');
    } finally {
      await client.close();
    }
  });

  it('carries content blocks beside the result, the same in the JSON reply and the result event', async () => {
    const plain = await invokeJson(host, 'iso_image', { arguments: {} });
    expect(plain.body).toEqual({
      successful: true,
      result: { pixels: 1 },
      errors: [],
      content: [
        { type: 'text', text: 'a red pixel' },
        { type: 'image', data: Buffer.from('not really a png').toString('base64'), mimeType: 'image/png' },
      ],
    });
    const streamed = await invokeStream(host, 'iso_image', { arguments: {} });
    expect(JSON.parse(streamed.events.at(-1)!.data)).toEqual(plain.body);
  });

  it('ignores forged protocol messages a package posts from its worker: its call, the next call and the host are unaffected', async () => {
    const forged = await invokeJson(host, 'iso_forge', { arguments: {} });
    expect(forged.body).toEqual({ successful: true, result: { forged: 11 }, errors: [] });
    const streamed = await invokeStream(host, 'iso_forge', { arguments: {} });
    expect(streamed.events.map((e) => e.event)).toEqual(['result']);
    expect((await invokeJson(host, 'iso_echo', { arguments: { text: 'after' } })).body.result.echo).toBe('after');
    expect(await healthy()).toBe(true);
  });

  it("keeps an isolated tool's approval policy: 'always' gates, one that depends on the arguments is asked in the worker, and an approved call runs there", async () => {
    const listed = (await (await fetch(`${host.url}/v1/tools`, { headers: AUTH })).json()) as {
      approvals: Record<string, string>;
    };
    expect(listed.approvals).toMatchObject({ iso_gated_always: 'always', iso_gated_dynamic: 'dynamic' });
    expect(listed.approvals.iso_echo).toBeUndefined();
    const always = await invokeJson(host, 'iso_gated_always', { arguments: { text: 'hello' } });
    expect(always.status).toBe(202);
    // Decided by another principal than the one that asked (separation of duties).
    const approved = await fetch(`${host.url}/v1/approvals/${always.body.approvalId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${APPROVER_KEY}` },
      body: '{"decision":"approve"}',
    });
    const decided = (await approved.json()) as {
      status: string;
      result: { successful: boolean; result: { ran: string; threadId: number } };
    };
    expect(decided).toMatchObject({ status: 'executed', result: { successful: true, result: { ran: 'hello' } } });
    expect(decided.result.result.threadId).toBeGreaterThan(0);

    const harmless = await invokeStream(host, 'iso_gated_dynamic', { arguments: { text: 'harmless' } });
    expect(JSON.parse(harmless.events.at(-1)!.data)).toMatchObject({ successful: true, result: { ran: 'harmless' } });
    const risky = await invokeStream(host, 'iso_gated_dynamic', { arguments: { text: 'risky' } });
    expect(risky.status).toBe(202);
    expect(risky.json!.reason).toBe('Risky text needs a person.');
    // A policy that throws fails closed, in the worker as in process.
    const broken = await invokeJson(host, 'iso_gated_dynamic', { arguments: { text: 'throw' } });
    expect(broken.status).toBe(202);
    expect(broken.body.reason).toContain('approval policy failed');
  });

  it('gates a call whose policy never returns in the worker, replaces that worker, and keeps serving', async () => {
    const hung = await invokeJson(host, 'iso_gated_dynamic', { arguments: { text: 'hang' } });
    expect(hung.status).toBe(202);
    expect(hung.body.reason).toContain('did not answer within');
    await logLine(
      host,
      (entry) => typeof entry.msg === 'string' && entry.msg.includes('replacing a worker that stayed busy'),
    );
    // The next call waits for the fresh worker (the caller's deadline still holds) and runs.
    expect((await invokeJson(host, 'iso_echo', { arguments: { text: 'after the hang' } })).body.result.echo).toBe(
      'after the hang',
    );
    expect(await healthy()).toBe(true);
  });

  it('streams an isolated tool over HTTP: progress and log events in order, then the result', async () => {
    const streamed = await invokeStream(host, 'iso_progress', { arguments: { steps: 2 } });
    expect(streamed.events.map((e) => e.event)).toEqual([
      'progress',
      'log',
      'progress',
      'log',
      'progress',
      'log',
      'result',
    ]);
    expect(progressOf(streamed.events)).toEqual(
      [0, 1, 2].map((i) => ({ progress: i, total: 2, message: `step ${i}` })),
    );
    expect(JSON.parse(streamed.events.at(-1)!.data).result.heard).toEqual({ progress: 'function', log: 'function' });
  });
});

async function healthy(): Promise<boolean> {
  const response = await fetch(`${host.url}/healthz`);
  return response.status === 200;
}
