/**
 * Subscriptions to a bridged server's resources: the real @modelcontextprotocol/server-everything over
 * stdio (2025 revision) declares `resources.subscribe`, so its bridged resources are subscribable. A
 * watch subscribes on the server, the server's `notifications/resources/updated` reach the watcher
 * (started by server-everything's own toggle-subscriber-updates tool, called through the bridge), and a
 * watch that stops hears nothing more while another of the same URI goes on hearing.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ResourceRegistry } from '@aptix/tool-contract';
import { bridgeHarness, EVERYTHING } from './servers.js';

const URI = 'demo://resource/static/document/architecture.md';
let h: Awaited<ReturnType<typeof bridgeHarness>>;
const resources = new ResourceRegistry();
beforeAll(async () => {
  h = await bridgeHarness({ name: 'everything', stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
  for (const resource of (await h.bridge.units()).resources ?? []) resources.register(resource);
}, 60_000);
afterAll(() => h?.bridge.close());

describe("a bridged server's resource subscriptions", () => {
  it('offers its resources as subscribable, and tells a watcher of the updates the server sends', async () => {
    const found = resources.resolve(URI)!;
    expect(found.resource.subscribable).toBe(true);
    const heard: string[] = [];
    const other: string[] = [];
    const stop = found.resource.resource.subscribe!(URI, () => heard.push(URI)) as () => void;
    const stopOther = found.resource.resource.subscribe!(URI, () => other.push(URI)) as () => void;
    // server-everything starts sending updates of subscribed resources (now, then every 5 s) when this tool is called.
    const toggled = await h.call('everything_toggle_subscriber_updates', {});
    expect(toggled.successful).toBe(true);
    await vi.waitFor(() => expect(heard.length).toBeGreaterThan(0), { timeout: 10_000 });
    expect(other.length).toBeGreaterThan(0);
    // Each watch is its own: one stopped hears nothing more while the other hears the next update (5 s on).
    stop();
    const count = heard.length;
    const otherCount = other.length;
    await vi.waitFor(() => expect(other.length).toBeGreaterThan(otherCount), { timeout: 12_000 });
    expect(heard.length).toBe(count);
    stopOther();
    await h.call('everything_toggle_subscriber_updates', {});
  }, 30_000);
});
