/**
 * Tools that change while the host runs, heard by a 2026-07-28 client on subscriptions/listen: a
 * package that follows its tools (it takes ToolPackageHost.toolsChanged) makes the host declare
 * tools.listChanged and drop list caching; a host whose packages cannot change keeps both promises.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { HOST_ROOT, hostForSuite, startHostWithConfig, type RunningHost } from './support.js';

const FIRST_PARTY = ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change'];
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/** A raw 2026-07-28 request's result. */
async function modernCall(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: ENVELOPE } }),
  });
  const text = await response.text();
  return JSON.parse(text.startsWith('{') ? text : /^data: (.+)$/m.exec(text)![1]!).result as Record<string, any>;
}

describe('a host whose tools can change', () => {
  let host: RunningHost;
  let cleanup = () => undefined as void;
  afterAll(async () => {
    await host?.stop();
    cleanup();
  });

  it('declares tools.listChanged, promises no caching (ttlMs 0), and tells a listening 2026 client when a tool comes and goes', async () => {
    const started = await startHostWithConfig({
      toolPackages: [...FIRST_PARTY, join(HOST_ROOT, 'test', 'fixtures', 'changing-tools')],
    });
    host = started.host;
    cleanup = () => started.space.cleanup();
    const discovered = await modernCall(host.url, 'server/discover');
    expect(discovered.capabilities.tools.listChanged).toBe(true);
    expect(await modernCall(host.url, 'tools/list')).toMatchObject({ ttlMs: 0 });

    const heard: string[][] = [];
    const client = new Client(
      { name: 'aptix-test-v2', version: '1' },
      {
        versionNegotiation: { mode: { pin: '2026-07-28' } },
        listChanged: {
          tools: { onChanged: (_error, tools) => void heard.push((tools ?? []).map((tool) => tool.name)) },
        },
      },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`)));
    try {
      await vi.waitFor(() => expect(client.autoOpenedSubscription).toBeDefined(), { timeout: 10_000, interval: 20 });
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('changing_extra');
      await client.callTool({ name: 'changing_toggle', arguments: {} });
      await vi.waitFor(() => expect(heard.at(-1)).toContain('changing_extra'), { timeout: 10_000, interval: 20 });
      await client.callTool({ name: 'changing_toggle', arguments: {} });
      await vi.waitFor(() => expect(heard.at(-1)).not.toContain('changing_extra'), { timeout: 10_000, interval: 20 });
      expect(heard.length).toBeGreaterThanOrEqual(2);
    } finally {
      await client.close();
    }
  });
});

describe('a host whose packages cannot change their tools', () => {
  const suite = hostForSuite();

  it('promises a list that does not change: no listChanged, and a cache hint', async () => {
    const discovered = await modernCall(suite.url, 'server/discover');
    expect(discovered.capabilities.tools.listChanged).toBeFalsy();
    expect((await modernCall(suite.url, 'tools/list')).ttlMs).toBeGreaterThan(0);
  });
});
