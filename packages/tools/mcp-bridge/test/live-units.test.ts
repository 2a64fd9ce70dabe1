/**
 * A bridge whose host follows prompt and resource changes (`ToolPackageHost.unitsChanged`), as `aptix`
 * does: after the server's prompts/list_changed or resources/list_changed the bridge lists them again,
 * paced as the tool list is, and reports the whole new lists when what it offers changed (the host's
 * side, with modes and MCP notices, is tested in apps/host). Against a server on the official v2
 * server SDK that changes its units on command, and a hostile one that floods and lies.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AgentToolExecutor,
  AgentToolRegistry,
  CapturingAdminLogger,
  PromptRegistry,
  renderPrompt,
  ResourceRegistry,
  type PackageUnits,
} from '@aptix/tool-contract';
import { McpBridge, MAX_BRIDGED_UNITS, parseBridgeOptions } from '../src/index.js';
import { HOSTILE_UNITS, UNITS } from './servers.js';

async function following(args: string[], name: string) {
  const logger = new CapturingAdminLogger();
  const bridge = await McpBridge.start(
    parseBridgeOptions({ name, connectTimeoutMs: 30_000, stdio: { command: process.execPath, args } }),
    { logger },
  );
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools(bridge.tools);
  const executor = new AgentToolExecutor({ registry, logger });
  const first = await bridge.units();
  const reports: PackageUnits[] = [];
  bridge.followUnits((units) => reports.push(units));
  const control = async (args: object) => {
    const result = await executor.execute(`${name}_control`, JSON.stringify(args), { sessionId: 's-1' });
    expect(result.errors).toEqual([]);
  };
  return { bridge, logger, first, reports, control };
}

describe('a server that changes its prompts and resources while the host runs', () => {
  let h: Awaited<ReturnType<typeof following>>;
  beforeAll(async () => {
    h = await following([UNITS], 'units');
  });
  afterAll(() => h?.bridge.close());

  it('reports the new lists after a prompt is added and a resource removed; unchanged units keep their objects', async () => {
    expect(h.first.prompts!.map((prompt) => prompt.name)).toEqual(['units_greet']);
    expect(h.first.resources!.map((resource) => resource.name)).toEqual(['units_notes', 'units_extra']);
    await h.control({ action: 'add_prompt', name: 'briefing' });
    await h.control({ action: 'remove_resource', name: 'extra' });
    await vi.waitFor(
      () => {
        const last = h.reports.at(-1);
        expect(last?.prompts?.map((prompt) => prompt.name)).toEqual(['units_greet', 'units_briefing']);
        expect(last?.resources?.map((resource) => resource.name)).toEqual(['units_notes']);
      },
      { timeout: 15_000, interval: 20 },
    );
    const last = h.reports.at(-1)!;
    expect(last.prompts![0]).toBe(h.first.prompts![0]);
    expect(last.resources![0]).toBe(h.first.resources![0]);
    // What the host gets passes its registries, and renders through the server.
    const prompts = new PromptRegistry();
    prompts.registerAll(last.prompts!);
    new ResourceRegistry().registerAll(last.resources!);
    const rendered = await renderPrompt(prompts.get('units_briefing')!, {}, { mode: 'general' });
    expect(JSON.stringify(rendered)).toContain('prompt briefing rendered');
  });

  it('a flood of list_changed costs a few listings, not one each, and reports nothing when nothing changed', async () => {
    const listings = h.bridge.unitListings;
    const reports = h.reports.length;
    await h.control({ action: 'flood', count: 2_000 });
    await vi.waitFor(() => expect(h.bridge.unitListings).toBeGreaterThan(listings), { timeout: 10_000, interval: 20 });
    await new Promise((resolve) => setTimeout(resolve, 600));
    // 4,000 notifications: at most one listing per 250 ms while they are read, however slow the machine.
    expect(h.bridge.unitListings - listings).toBeLessThan(50);
    expect(h.reports.length).toBe(reports);
  });
});

describe('a hostile server that floods list_changed and answers huge and malformed lists', () => {
  let h: Awaited<ReturnType<typeof following>>;
  beforeAll(async () => {
    h = await following([HOSTILE_UNITS, '--churn'], 'hostile');
  });
  afterAll(() => h?.bridge.close());

  it(`is listed a few times a second, offers at most ${MAX_BRIDGED_UNITS} of a huge list, and keeps its units through a malformed one`, async () => {
    // Three listings: the huge list, the malformed one, and a short one.
    await vi.waitFor(() => expect(h.bridge.unitListings).toBeGreaterThanOrEqual(3), { timeout: 20_000, interval: 20 });
    const huge = h.reports.find((units) => (units.prompts?.length ?? 0) > 1);
    expect(huge?.prompts).toHaveLength(MAX_BRIDGED_UNITS);
    const events = h.logger.entries.map((entry) => ('tag' in entry ? entry.tag : ''));
    expect(events).toContain('[McpBridge_UnitRelistFailed]');
    await vi.waitFor(
      () => expect(h.reports.at(-1)?.prompts?.map((prompt) => prompt.name)[0]).toMatch(/^hostile_round_\d+$/),
      { timeout: 20_000, interval: 20 },
    );
    // The server sends 400 notifications a second; the bridge lists at most four times a second, and its
    // log lines of one kind are bounded (the rest are counted; see repeat-limiter.ts).
    const listings = h.bridge.unitListings;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(h.bridge.unitListings - listings).toBeLessThan(10);
    const failures = h.logger.entries.filter((entry) => 'tag' in entry && entry.tag === '[McpBridge_UnitRelistFailed]');
    expect(failures.length).toBeLessThanOrEqual(20);
    expect(h.bridge.connected).toBe(true);
  });
});
