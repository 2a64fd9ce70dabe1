/**
 * Who sees which prompts and resources (issue 37): over stdio (`aptix mcp`, one server for the
 * connection, so a subscribed resource's update arrives at once), and per principal over HTTP.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectStdio } from './mcp-host.js';
import { scratch, startHostWithConfig, type RunningHost } from './support.js';
import { UNIT_PACKAGES } from './unit-fixture.js';

const PACKAGES = UNIT_PACKAGES;

describe('over stdio (aptix mcp)', () => {
  it('lists and gets prompts, and sends a subscribed resource update the moment it changes', async () => {
    const space = scratch();
    const file = join(space.dir, 'aptix.config.json');
    writeFileSync(file, JSON.stringify({ toolPackages: PACKAGES }));
    const client = await connectStdio(new Client({ name: 'aptix-test', version: '1.0.0' }), file, space.db);
    const heard: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      heard.push(notification.params.uri);
    });
    try {
      expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain('fixture_greeting');
      expect((await client.getPrompt({ name: 'mode_general' })).messages).toHaveLength(1);
      await client.subscribeResource({ uri: 'fixture://counter' });
      await client.callTool({ name: 'fixture_bump', arguments: {} });
      // No further request: the connection's server sends it by itself.
      await vi.waitFor(() => expect(heard).toEqual(['fixture://counter']), { timeout: 10_000, interval: 20 });
    } finally {
      await client.close();
      space.cleanup();
    }
  });
});

describe('per principal', () => {
  const KEYS = { ops: 'ops-key-0123456789abcdef00', viewer: 'viewer-key-0123456789abcde' };
  let host: RunningHost;
  let cleanup = () => undefined as void;
  beforeAll(async () => {
    const started = await startHostWithConfig(
      { toolPackages: PACKAGES, principals: { viewer: { tools: ['agent_*'], modes: ['general'] } } },
      {
        APTIX_API_KEYS: Object.entries(KEYS)
          .map(([name, key]) => `${name}=${key}`)
          .join(','),
      },
    );
    host = started.host;
    cleanup = () => started.space.cleanup();
  });
  afterAll(async () => {
    await host?.stop();
    cleanup();
  });
  const get = async (path: string, who: keyof typeof KEYS) => {
    const response = await fetch(`${host.url}${path}`, { headers: { authorization: `Bearer ${KEYS[who]}` } });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  it("sees a package's units only through its permissions, guides only of tools it may call, mode prompts only of modes it may use", async () => {
    const everything = await get('/v1/prompts', 'ops');
    expect(everything.body.prompts.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['fixture_greeting', 'mode_general', 'mode_ddr_authoring']),
    );
    const viewerPrompts = (await get('/v1/prompts', 'viewer')).body.prompts.map((p: { name: string }) => p.name);
    expect(viewerPrompts).toContain('mode_general');
    expect(viewerPrompts).not.toContain('mode_ddr_authoring');
    expect(viewerPrompts).not.toContain('fixture_greeting');
    const viewerResources = (await get('/v1/resources', 'viewer')).body.resources.map((r: { uri: string }) => r.uri);
    expect(viewerResources).toEqual(expect.arrayContaining(['aptix://modes', 'aptix://tools/agent_list_modes/guide']));
    expect(viewerResources).not.toContain('aptix://tools/fixture_bump/guide');
    expect(viewerResources).not.toContain('fixture://logo.png');
    expect(
      await get(`/v1/resources/read?uri=${encodeURIComponent('aptix://tools/fixture_bump/guide')}`, 'viewer'),
    ).toMatchObject({
      status: 404,
      body: { error: { code: 'RESOURCE_NOT_FOUND' } },
    });
    expect(
      (await get(`/v1/resources/read?uri=${encodeURIComponent('aptix://tools/fixture_bump/guide')}`, 'ops')).status,
    ).toBe(200);
  });
});
