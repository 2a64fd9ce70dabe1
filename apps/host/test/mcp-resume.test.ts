/**
 * Resumable response streams for 2025-11-25 sessions (SEP-1699), through a real `aptix serve` whose
 * `mcp.streamHoldMs` closes a call's stream while the call runs: a priming event, ids on every event,
 * a call that outlives its connection, and `GET` with `Last-Event-ID` that delivers the rest. Attacked
 * with other sessions' event ids, made-up ids and ids past the end; a second reader takes the stream over.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostWithConfig, type RunningHost } from './support.js';
import { ResumableStreams } from '../src/mcp/resumable-streams.js';

const HOLD_MS = 300;
let host: RunningHost;

/** An agent session in the mode that offers testing_delay, and a raw 2025-era MCP session bound to it. */
async function rawSession(protocolVersion = '2025-11-25'): Promise<{ mcp: string; agent: string; version: string }> {
  const agent = (
    (await (
      await fetch(`${host.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'tool_diagnostics' }),
      })
    ).json()) as { id: string }
  ).id;
  const response = await fetch(`${host.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-aptix-session-id': agent,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  expect(response.status).toBe(200);
  await response.text();
  return { mcp: response.headers.get('mcp-session-id')!, agent, version: protocolVersion };
}

function delayCall(session: { mcp: string; version: string }, milliseconds: number, id = 1, signal?: AbortSignal) {
  return fetch(`${host.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': session.mcp,
      'mcp-protocol-version': session.version,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'testing_delay', arguments: { milliseconds } },
    }),
    ...(signal ? { signal } : {}),
  });
}

function resume(session: { mcp: string; version: string }, lastEventId: string) {
  return fetch(`${host.url}/mcp`, {
    headers: {
      accept: 'text/event-stream',
      'mcp-session-id': session.mcp,
      'mcp-protocol-version': session.version,
      'last-event-id': lastEventId,
    },
  });
}

/** Every event of a stream until it ends, with the retry it asked for. */
async function readEvents(response: Response): Promise<{ events: EventSourceMessage[]; retry: number | undefined }> {
  const events: EventSourceMessage[] = [];
  let retry: number | undefined;
  const parser = createParser({ onEvent: (event) => events.push(event), onRetry: (value) => (retry = value) });
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
  return { events, retry };
}

/** Resumes as a client would, connection after connection (the hold closes each), until the answer to `id` comes. */
async function resumeUntilAnswered(
  session: { mcp: string; version: string },
  from: string,
  id: number,
): Promise<EventSourceMessage[]> {
  const seen: EventSourceMessage[] = [];
  let last = from;
  for (let attempt = 0; attempt < 50 && resultOf(seen, id) === undefined; attempt++) {
    const { events } = await readEvents(await resume(session, last));
    expect(events[0], 'each resumed stream opens with a priming event at the client position').toMatchObject({
      id: last,
      data: '',
    });
    seen.push(...events);
    last = events.at(-1)!.id!;
  }
  return seen;
}

const resultOf = (events: readonly EventSourceMessage[], id: number) =>
  events
    .map((event) => (event.data ? JSON.parse(event.data) : undefined))
    .find((message) => message?.id === id && message.result);

// The fast lane writes plain calls' streams itself (recorded as they are made); the SDK path's streams are recorded from the SDK's events.
describe.each([
  ['the fast lane', {}],
  ['the SDK path', { APTIX_MCP_FAST_LANE: 'off' }],
])('resumable MCP response streams (2025-11-25), through %s', (_path, env) => {
  let cleanup: () => void;
  beforeAll(async () => {
    const started = await startHostWithConfig({ mcp: { streamHoldMs: HOLD_MS, streamRetryMs: 50 } }, env);
    host = started.host;
    cleanup = () => started.space.cleanup();
  });
  afterAll(async () => {
    await host?.stop();
    cleanup?.();
  });

  it('answers a quick call with the priming event then the answer, its id next in the stream, and keeps nothing', async () => {
    const session = await rawSession();
    const response = await delayCall(session, 0, 3);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { events, retry } = await readEvents(response);
    expect(retry).toBe(50);
    expect(events).toHaveLength(2);
    const [priming, answer] = events;
    expect(priming).toMatchObject({ data: '', id: expect.stringMatching(/^[0-9a-f]{32}\.0$/) });
    expect(answer!.id).toBe(priming!.id!.replace(/\.0$/, '.1'));
    expect(JSON.parse(resultOf(events, 3).result.content[0].text)).toMatchObject({ wasCancelled: false });
    expect((await resume(session, priming!.id!)).status).toBe(404);
  });

  it('sends progress before the answer, each event with the next id, and replays them from any position', async () => {
    const session = await rawSession();
    const response = await fetch(`${host.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session.mcp,
        'mcp-protocol-version': session.version,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'testing_delay', arguments: { milliseconds: HOLD_MS * 2 }, _meta: { progressToken: 'p' } },
      }),
    });
    const first = await readEvents(response);
    const all = [
      ...first.events,
      ...(resultOf(first.events, 4) ? [] : await resumeUntilAnswered(session, first.events.at(-1)!.id!, 4)),
    ];
    const sent = all.filter((event) => event.data !== '');
    expect(sent.map((event) => Number(event.id!.split('.')[1]))).toEqual(sent.map((_, index) => index + 1));
    expect(sent.slice(0, -1).every((event) => JSON.parse(event.data).method === 'notifications/progress')).toBe(true);
    expect(sent.length).toBeGreaterThan(1);
    expect(JSON.parse(sent.at(-1)!.data)).toMatchObject({ id: 4, result: {} });
  });

  it('lets the v1 SDK client finish a call that outlasts the hold: it resumes by itself', async () => {
    const { agent } = await rawSession();
    const client = new Client({ name: 'aptix-test-v1', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
        requestInit: { headers: { 'x-aptix-session-id': agent } },
      }),
    );
    try {
      const result = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: HOLD_MS * 4 } });
      expect(result.isError).toBeFalsy();
      expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ wasCancelled: false });
    } finally {
      await client.close();
    }
  });

  it('opens with a priming event, closes the stream at the hold without cancelling the call, and replays the rest on GET with Last-Event-ID', async () => {
    const session = await rawSession();
    // Half a hold off its multiples, so the call ends while a resumed connection reads (not between two), however the timers fall.
    const first = await readEvents(await delayCall(session, HOLD_MS * 2.5));
    expect(first.retry).toBe(50);
    expect(first.events[0]).toMatchObject({ data: '', id: expect.stringMatching(/^[0-9a-f]{32}\.0$/) });
    expect(resultOf(first.events, 1)).toBeUndefined();
    const last = first.events.at(-1)!.id!;

    const rest = await resumeUntilAnswered(session, last, 1);
    expect(JSON.parse(resultOf(rest, 1).result.content[0].text)).toMatchObject({
      wasCancelled: false,
      requestedMs: HOLD_MS * 2.5,
    });
    expect(rest.every((event) => /^[0-9a-f]{32}\.\d+$/.test(event.id!))).toBe(true);
    // Read to its end, the stream is not kept: nothing is held for a client that has everything.
    expect((await resume(session, `${last.split('.')[0]}.0`)).status).toBe(404);
  });

  it('does not treat a dropped connection as a cancellation: the call finishes and can be read', async () => {
    const session = await rawSession();
    const controller = new AbortController();
    // Long enough that the host sees the client go well before the call ends, however loaded it is.
    const response = await delayCall(session, HOLD_MS * 5, 5, controller.signal);
    const reader = response.body!.getReader();
    const { value } = await reader.read();
    const priming = /id: (\S+)/.exec(new TextDecoder().decode(value))![1]!;
    controller.abort();
    // The stream went on without a reader: resumed from its start, it replays in order, then the rest.
    const streamId = priming.split('.')[0]!;
    const replayed = await resumeUntilAnswered(session, `${streamId}.0`, 5);
    expect(JSON.parse(resultOf(replayed, 5).result.content[0].text)).toMatchObject({ wasCancelled: false });
    const sent = replayed.filter((event) => event.data !== '').map((event) => Number(event.id!.split('.')[1]));
    expect(sent).toEqual(sent.map((_, index) => index + 1));
  });

  it('stops a call on notifications/cancelled and sends it no response, as the protocol says', async () => {
    const session = await rawSession();
    const call = delayCall(session, 5_000, 9).then(readEvents);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await fetch(`${host.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session.mcp,
        'mcp-protocol-version': session.version,
      },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } }),
    });
    const first = await call;
    expect(resultOf(first.events, 9)).toBeUndefined();
    // The stream ended there: nothing is left to resume, and no answer ever comes.
    const again = await resume(session, first.events.at(-1)!.id!);
    expect(again.status).toBe(404);
  });

  it("refuses another session's stream, made-up ids and ids past the end, saying why", async () => {
    const owner = await rawSession();
    const stranger = await rawSession();
    // A stream whose client went away before the end is kept for resuming.
    const controller = new AbortController();
    const reader = (await delayCall(owner, HOLD_MS * 5, 1, controller.signal)).body!.getReader();
    const streamId = /id: ([0-9a-f]{32})\./.exec(new TextDecoder().decode((await reader.read()).value))![1]!;
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const foreign = await resume(stranger, `${streamId}.0`);
    expect(foreign.status).toBe(404);
    const message = ((await foreign.json()) as { error: { message: string } }).error.message;
    expect(message).toContain('Send every request of an MCP session to one host');
    for (const made of [
      '0',
      'x'.repeat(5000),
      `${streamId}.-1`,
      `${streamId}`,
      '../../etc/passwd',
      `${'0'.repeat(32)}.1`,
    ]) {
      expect((await resume(owner, made)).status, made.slice(0, 40)).toBe(404);
    }
    const past = await resume(owner, `${streamId}.999`);
    expect(past.status).toBe(400);
    expect(((await past.json()) as { error: { message: string } }).error.message).toContain('was never sent');
  });

  it('hands the stream to a client that reconnects before the host saw its old connection drop, closing the old one', async () => {
    const session = await rawSession();
    const response = await delayCall(session, HOLD_MS * 3);
    const reader = response.body!.getReader();
    const priming = /id: (\S+)/.exec(new TextDecoder().decode((await reader.read()).value))![1]!;
    const second = await resume(session, priming);
    expect(second.status).toBe(200);
    // The first connection ends without the answer; the second gets it.
    let first = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      first += new TextDecoder().decode(chunk.value);
    expect(first).not.toContain('"result"');
    const rest = [...(await readEvents(second)).events];
    const answered = resultOf(rest, 1) ? rest : [...rest, ...(await resumeUntilAnswered(session, rest.at(-1)!.id!, 1))];
    expect(JSON.parse(resultOf(answered, 1).result.content[0].text)).toMatchObject({ wasCancelled: false });
  });

  it('sends no priming event to a client older than 2025-11-25, which cannot take empty data', async () => {
    const session = await rawSession('2025-06-18');
    const { events } = await readEvents(await delayCall(session, 10));
    expect(events.some((event) => event.data === '')).toBe(false);
    expect(resultOf(events, 1)).toBeDefined();
  });
});

describe('a response stream that ends without its answer', () => {
  /** An SDK answer stream: one progress event, then the stream fails (or just ends) before the result. */
  function brokenAnswer(fail: boolean): Response {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(
          new TextEncoder().encode(
            `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`,
          ),
        );
        if (fail) controller.error(new Error('the SDK stream broke'));
        else controller.close();
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  }

  it.each([true, false])(
    'answers with "outcome unknown" for the request, never a result and never silence (stream failed: %s)',
    async (fail) => {
      const streams = new ResumableStreams();
      const { events } = await readEvents(streams.record('s-1', brokenAnswer(fail), new AbortController().signal, 42));
      const last = JSON.parse(events.at(-1)!.data) as {
        id: number;
        error?: { code: number; message: string };
        result?: unknown;
      };
      expect(last.id).toBe(42);
      expect(last.result).toBeUndefined();
      expect(last.error!.code).toBe(-32603);
      expect(last.error!.message).toContain('is unknown');
      expect(events.filter((event) => event.data.includes('"error"'))).toHaveLength(1);
    },
  );

  it('adds nothing to a stream that carried its answer', async () => {
    const streams = new ResumableStreams();
    const body = new Response(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [] } })}\n\n`,
      { headers: { 'content-type': 'text/event-stream' } },
    );
    const { events } = await readEvents(streams.record('s-1', body, new AbortController().signal, 7));
    expect(events.filter((event) => event.data !== '')).toHaveLength(1);
    expect(JSON.parse(events.at(-1)!.data).result).toEqual({ content: [] });
  });
});
