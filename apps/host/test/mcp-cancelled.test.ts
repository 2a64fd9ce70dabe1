/**
 * A 2025 client's `notifications/cancelled`: the call stops, and its request gets no response (the
 * specification: the receiver SHOULD NOT answer a cancelled request). Through the fast lane and the
 * SDK path, on a resumable 2025-11-25 stream and a plain 2025-06-18 one. That the tool stopped is seen
 * in its progress: it never reports the whole count done. slow_count cannot run as a task, so the fast
 * lane serves it; testing_delay can, so its calls take the SDK path.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostWithConfig, type RunningHost } from './support.js';

const headers = (session: string, version: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-session-id': session,
  'mcp-protocol-version': version,
});

async function openSession(url: string, version: string): Promise<string> {
  const response = await fetch(`${url}/modes/counting/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  await response.text();
  const session = response.headers.get('mcp-session-id')!;
  await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: headers(session, version),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return session;
}

/** Calls a tool with a progress token, cancels it once its first progress report arrives, and reads the stream to its end. */
async function cancelledCall(
  url: string,
  version: string,
  call: { name: string; arguments: Record<string, unknown> },
): Promise<
  Array<{ id?: unknown; result?: unknown; error?: unknown; method?: string; params?: { progress?: number } }>
> {
  const session = await openSession(url, version);
  const response = await fetch(`${url}/modes/counting/mcp`, {
    method: 'POST',
    headers: headers(session, version),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { ...call, _meta: { progressToken: 'p' } },
    }),
  });
  const messages: Array<Record<string, any>> = [];
  let cancelled: Promise<Response> | undefined;
  const parser = createParser({
    onEvent: (event: EventSourceMessage) => {
      if (event.data === '') return;
      const message = JSON.parse(event.data) as Record<string, any>;
      messages.push(message);
      cancelled ??= fetch(`${url}/modes/counting/mcp`, {
        method: 'POST',
        headers: headers(session, version),
        body: JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 7, reason: 'the user pressed stop' },
        }),
      });
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
  expect((await cancelled)?.status).toBe(202);
  return messages;
}

const CONFIG = {
  toolPackages: [
    '@aptix/tool-samples',
    '@aptix/tool-mode-catalog',
    '@aptix/tool-mode-change',
    fileURLToPath(new URL('./fixtures/cancellable/', import.meta.url)),
  ],
  modes: {
    add: [
      {
        key: 'counting',
        displayName: 'Counting',
        description: 'Counting slowly, to test cancellation.',
        tools: ['slow_count', 'testing_delay'],
      },
    ],
  },
};

for (const [lane, call, total] of [
  ['the fast lane', { name: 'slow_count', arguments: { steps: 200 } }, 200],
  ['the SDK path', { name: 'testing_delay', arguments: { milliseconds: 4_000 } }, 4_000],
] as const) {
  describe(`notifications/cancelled through ${lane}`, () => {
    let host: RunningHost;
    let cleanup: () => void;
    beforeAll(async () => {
      const started = await startHostWithConfig(CONFIG);
      host = started.host;
      cleanup = () => started.space.cleanup();
    });
    afterAll(async () => {
      await host.stop();
      cleanup();
    });

    for (const version of ['2025-11-25', '2025-06-18']) {
      it(`${version}: stops the call and sends its request no response`, async () => {
        const messages = await cancelledCall(host.url, version, call);
        expect(
          messages.filter((message) => message.id === 7),
          JSON.stringify(messages),
        ).toEqual([]);
        const progress = messages
          .filter((message) => message.method === 'notifications/progress')
          .map((message) => message.params!.progress!);
        expect(progress.length).toBeGreaterThanOrEqual(1);
        expect(Math.max(...progress)).toBeLessThan(total - 1);
      });
    }
  });
}
