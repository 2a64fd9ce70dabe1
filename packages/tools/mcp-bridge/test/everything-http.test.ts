import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExecutionErrorCode } from '@aptix/tool-contract';
import { BridgeErrorCode } from '../src/index.js';
import { bridgeHarness, freePort, startEverythingHttp, stop, text, progressListener } from './servers.js';

describe('server-everything over Streamable HTTP', () => {
  let server: ChildProcess | undefined;
  let port: number;
  let h: Awaited<ReturnType<typeof bridgeHarness>>;
  beforeAll(async () => {
    port = await freePort();
    server = await startEverythingHttp(port);
    process.env.BRIDGE_TEST_HTTP_TOKEN = 'not-checked-by-this-server';
    h = await bridgeHarness({
      name: 'everything http',
      http: {
        url: `http://127.0.0.1:${port}/mcp`,
        headers: { Authorization: { env: 'BRIDGE_TEST_HTTP_TOKEN', prefix: 'Bearer ' } },
      },
      reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    });
  });
  afterAll(async () => {
    await h?.bridge.close();
    await stop(server);
  });

  it('lists the tools under a prefix made from the name, and speaks the 2025 revision this server knows', () => {
    expect(h.registry.names()).toEqual(expect.arrayContaining(['everything_http_echo', 'everything_http_get_sum']));
    expect(h.bridge.protocolVersion).toMatch(/^2025-/);
  });

  it('calls tools, passes structured content and reports the server errors', async () => {
    expect(text((await h.call('everything_http_echo', { message: 'over http' })).value)).toBe('Echo: over http');
    expect((await h.call('everything_http_get_sum', { a: 2, b: 40 })).value).toMatchObject({
      content: [{ type: 'text', text: expect.stringContaining('42') }],
    });
    expect(
      (await h.call('everything_http_get_structured_content', { location: 'New York' })).value?.structuredContent,
    ).toMatchObject({ temperature: 33 });
    const refused = await h.call('everything_http_gzip_file_as_resource', { data: 'file:///etc/passwd' });
    expect(refused.errors[0]).toEqual({
      code: BridgeErrorCode.REMOTE_TOOL_ERROR,
      message: expect.stringContaining('Unsupported URL protocol'),
    });
  });

  it('forwards cancellation and time-outs', async () => {
    const controller = new AbortController();
    const listener = progressListener();
    const pending = h.call(
      'everything_http_trigger_long_running_operation',
      { duration: 20, steps: 20 },
      { signal: controller.signal },
      listener.context,
    );
    await vi.waitFor(() => expect(listener.reports.length).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
    controller.abort();
    expect((await pending).value).toMatchObject({ wasCancelled: true, outcome: 'no_effect' });
    const late = await h.call(
      'everything_http_trigger_long_running_operation',
      { duration: 20, steps: 2 },
      { timeoutMs: 300 },
    );
    expect(late.errors[0]?.code).toBe(ExecutionErrorCode.TIMEOUT);
  });

  it('answers REMOTE_UNAVAILABLE while the server is down, and reconnects when it comes back', async () => {
    await stop(server, 'SIGKILL');
    const down = await h.call('everything_http_echo', { message: 'anyone?' });
    expect(down.successful).toBe(false);
    expect(down.errors[0]?.code).toBe(BridgeErrorCode.REMOTE_UNAVAILABLE);
    expect(down.errors[0]?.message).toContain('everything http');
    const again = await h.call('everything_http_echo', { message: 'still down?' });
    expect(again.errors[0]?.code).toBe(BridgeErrorCode.REMOTE_UNAVAILABLE);
    server = await startEverythingHttp(port);
    await vi.waitFor(() => expect(h.bridge.connected).toBe(true), { timeout: 15_000, interval: 20 });
    expect(text((await h.call('everything_http_echo', { message: 'back' })).value)).toBe('Echo: back');
  });

  it('notices a server that restarted between two calls (its session is gone) and reconnects', async () => {
    await stop(server, 'SIGKILL');
    server = await startEverythingHttp(port);
    // The first call meets the new server with the old session; whatever it answers, it names the server, and the bridge reconnects.
    const first = await h.call('everything_http_echo', { message: 'new server?' });
    if (!first.successful) expect(first.errors[0]?.code).toBe(BridgeErrorCode.REMOTE_UNAVAILABLE);
    await vi.waitFor(
      async () => expect(text((await h.call('everything_http_echo', { message: 'again' })).value)).toBe('Echo: again'),
      { timeout: 15_000, interval: 50 },
    );
  });
});
