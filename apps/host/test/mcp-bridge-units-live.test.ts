/**
 * A bridged server's prompts and resources that change while the host runs: a real `aptix serve`
 * bridging an MCP server on the official v2 server SDK (McpServer over stdio) that adds a prompt and
 * removes a resource on command. Real SDK clients of both generations see the notification and the new
 * lists: a 2025 session on its next request's stream (at once over stdio), a 2026-07-28 client on
 * subscriptions/listen.
 * Beside it, a hostile server that floods list_changed and answers huge and malformed lists.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, vi } from 'vitest';
import { configuredHostForSuite, connectStdio, connectV1, connectV2, FIRST_PARTY } from './mcp-host.js';
import { scratch } from './support.js';

const require = createRequire(import.meta.url);
const fixtures = join(dirname(require.resolve('@aptix/tool-mcp-bridge/package.json')), 'test', 'fixtures');
const bridge = (name: string, script: string, args: string[] = []) => ({
  package: '@aptix/tool-mcp-bridge',
  startupTimeoutMs: 60_000,
  options: {
    name,
    connectTimeoutMs: 30_000,
    modes: ['general'],
    stdio: { command: process.execPath, args: [join(fixtures, script), ...args] },
  },
});

const suite = configuredHostForSuite(
  {
    toolPackages: [
      ...FIRST_PARTY,
      bridge('units', 'units-server.mjs'),
      bridge('hostile', 'hostile-units-server.mjs', ['--churn']),
    ],
  },
  90_000,
);

const control = async (url: string, args: object) => {
  const response = await fetch(`${url}/v1/tools/units_control/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: args }),
  });
  expect(((await response.json()) as { errors: unknown[] }).errors).toEqual([]);
};

describe("a bridged server's prompts and resources that change while the host runs", () => {
  it('declares listChanged for prompts and resources, and promises no caching of their 2026-07-28 lists', async () => {
    const client = await connectV2(`${suite.host.url}/mcp`, 'units-live-discover');
    try {
      const capabilities = client.getServerCapabilities();
      expect(capabilities?.prompts?.listChanged).toBe(true);
      expect(capabilities?.resources?.listChanged).toBe(true);
      // ttlMs 0: the spec's "immediately stale".
      expect(((await client.listPrompts()) as { ttlMs?: number }).ttlMs).toBe(0);
      expect(((await client.listResources()) as { ttlMs?: number }).ttlMs).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('a prompt added and a resource removed reach a 2025 session and a 2026-07-28 listener, with the new lists', async () => {
    const url = suite.host.url;
    const legacy = new V1Client({ name: 'units-live-v1', version: '1' });
    const legacyHeard: string[] = [];
    legacy.setNotificationHandler(PromptListChangedNotificationSchema, () => void legacyHeard.push('prompts'));
    legacy.setNotificationHandler(ResourceListChangedNotificationSchema, () => void legacyHeard.push('resources'));
    await connectV1(`${url}/mcp`, legacy);
    const heard = { prompts: [] as string[][], resources: [] as string[][] };
    const modern = new Client(
      { name: 'units-live-v2', version: '1' },
      {
        versionNegotiation: { mode: { pin: '2026-07-28' } },
        listChanged: {
          prompts: { onChanged: (_error, prompts) => void heard.prompts.push((prompts ?? []).map((p) => p.name)) },
          resources: {
            onChanged: (_error, resources) => void heard.resources.push((resources ?? []).map((r) => r.uri)),
          },
        },
      },
    );
    await modern.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    try {
      await vi.waitFor(() => expect(modern.autoOpenedSubscription).toBeDefined(), { timeout: 10_000, interval: 20 });
      const prompts = (await legacy.listPrompts()).prompts.map((prompt) => prompt.name);
      expect(prompts).toContain('units_greet');
      expect(prompts).not.toContain('units_briefing');
      expect((await legacy.listResources()).resources.map((resource) => resource.uri)).toContain('units://extra');
      legacyHeard.length = 0;

      await control(url, { action: 'add_prompt', name: 'briefing' });
      await control(url, { action: 'remove_resource', name: 'extra' });

      // 2026-07-28: the listen stream carries both notifications, and the client's refresh has the new lists.
      await vi.waitFor(() => expect(heard.prompts.at(-1)).toContain('units_briefing'), {
        timeout: 15_000,
        interval: 20,
      });
      await vi.waitFor(() => expect(heard.resources.at(-1)).not.toContain('units://extra'), {
        timeout: 15_000,
        interval: 20,
      });
      expect(heard.resources.at(-1)).toContain('units://notes');
      const rendered = await modern.getPrompt({ name: 'units_briefing' });
      expect(JSON.stringify(rendered.messages)).toContain('prompt briefing rendered');

      // 2025: the session's next request carries list_changed for what it listed before, and lists anew.
      const listed = (await legacy.listPrompts()).prompts.map((prompt) => prompt.name);
      expect(listed).toContain('units_briefing');
      expect(legacyHeard).toEqual(expect.arrayContaining(['prompts', 'resources']));
      expect((await legacy.listResources()).resources.map((resource) => resource.uri)).not.toContain('units://extra');
      // A read of the withdrawn resource says why.
      await expect(legacy.readResource({ uri: 'units://extra' })).rejects.toThrow(
        /Resource "units_extra" from "@aptix\/tool-mcp-bridge" is no longer offered/,
      );
      await expect(modern.readResource({ uri: 'units://extra' })).rejects.toThrow(/is no longer offered/);
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it('a hostile server flooding list_changed with huge and malformed lists leaves the host answering, its lists bounded', async () => {
    const url = suite.host.url;
    const client = await connectV1(`${url}/mcp`, 'units-live-hostile');
    try {
      // The churning server's units are followed (its rounds come and go) while the host keeps answering;
      // its huge list is cut to the bridge's limit.
      const seen = new Set<number>();
      await vi.waitFor(
        async () => {
          const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
          expect(prompts).toContain('units_greet');
          const hostile = prompts.filter((name) => name.startsWith('hostile_'));
          expect(hostile.length).toBeLessThanOrEqual(500);
          seen.add(hostile.length);
          expect(seen.has(500) && hostile.some((name) => /^hostile_round_\d+$/.test(name))).toBe(true);
        },
        { timeout: 30_000, interval: 20 },
      );
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect(suite.host.child.exitCode).toBeNull();
      expect(suite.host.logs.some((line) => JSON.stringify(line).includes('[McpBridge_UnitRelistFailed]'))).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('over stdio (aptix mcp, a 2025 connection)', () => {
  it('sends prompts/list_changed and resources/list_changed the moment the bridged server changes them', async () => {
    const space = scratch();
    const file = join(space.dir, 'aptix.config.json');
    writeFileSync(file, JSON.stringify({ toolPackages: [...FIRST_PARTY, bridge('units', 'units-server.mjs')] }));
    const client = new V1Client({ name: 'units-live-stdio', version: '1' });
    const heard: string[] = [];
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void heard.push('prompts'));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void heard.push('resources'));
    await connectStdio(client, file, space.db);
    try {
      expect(client.getServerCapabilities()?.prompts?.listChanged).toBe(true);
      await client.callTool({ name: 'units_control', arguments: { action: 'add_prompt', name: 'briefing' } });
      await client.callTool({ name: 'units_control', arguments: { action: 'remove_resource', name: 'extra' } });
      // No further request: the connection's server sends them by itself.
      await vi.waitFor(() => expect(heard).toEqual(expect.arrayContaining(['prompts', 'resources'])), {
        timeout: 15_000,
        interval: 20,
      });
      expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain('units_briefing');
      expect((await client.listResources()).resources.map((resource) => resource.uri)).not.toContain('units://extra');
    } finally {
      await client.close();
      space.cleanup();
    }
  }, 90_000);
});
