import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AgentToolRegistry, type AnyAgentToolClass } from '@aptix/tool-contract';
import { loadModeCatalog } from '@aptix/tool-mode-catalog';
import { CalculatorTool, DelayTool, PingPongTool } from '@aptix/tool-samples';
import { MIN_GAP_MS } from '../src/change-bell.js';
import { HostPermissions } from '../src/host-permissions.js';
import { LiveTools } from '../src/live-tools.js';
import { PrincipalTable } from '../src/permissions.js';
import type { LoadedToolPackage } from '../src/tool-packages.js';

function loaded(name: string, tools: readonly AnyAgentToolClass[]): LoadedToolPackage {
  return {
    specifier: name,
    name,
    version: undefined,
    entry: name,
    folder: '.',
    tools,
    dependencies: {},
    isolation: 'none',
    close: async () => undefined,
  };
}

/** A tool class joining `general`, built the way a package would make one at run time. */
function joining(base: typeof DelayTool, modes: unknown): AnyAgentToolClass {
  // Own static members, as the contract asks (an inherited ToolName is refused).
  return class extends base {
    static override readonly ToolName = base.ToolName;
    static override readonly ToolUsageMetadata = base.ToolUsageMetadata;
    static override readonly TimeoutMs = base.TimeoutMs;
    static override getSchema() {
      return base.getSchema();
    }
    static readonly Modes = modes as readonly string[];
  };
}

/** Lets the change bell ring: it tells at the end of the turn, and at most once per MIN_GAP_MS. */
const told = () => new Promise((resolve) => setTimeout(resolve, MIN_GAP_MS + 10));

async function harness() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) },
  );
  const registry = new AgentToolRegistry();
  const catalog = await loadModeCatalog();
  const live = new LiveTools();
  const host = live.follower();
  const quiet = live.follower();
  registry.registerTools([CalculatorTool, PingPongTool]);
  host.loaded(loaded('host-tools', [CalculatorTool]));
  quiet.loaded(loaded('quiet', [PingPongTool]));
  let built = 0;
  live.attach({ registry, catalog, logger, build: () => void built++ });
  return { live, host, quiet, registry, lines, built: () => built };
}

describe('LiveTools: tool lists that change while the host runs', () => {
  it('counts only a package that takes toolsChanged as one whose tools may change', async () => {
    const h = await harness();
    expect(h.live.mayChange).toBe(false);
    h.host.watched(); // what reading toolsChanged from its ToolPackageHost does
    expect(h.live.mayChange).toBe(true);
  });

  it('offers a new class in the catalog modes it declares, skipping modes the host lacks, and withdraws one no longer listed', async () => {
    const h = await harness();
    let notified = 0;
    h.live.onChange(() => void notified++);
    expect(h.live.offered('general')).toBeUndefined(); // nothing changed yet: the catalog's selection stands
    h.host.toolsChanged([CalculatorTool, joining(DelayTool, ['general', 'no_such_mode'])]);
    expect(h.live.retired('testing_delay')).toBeUndefined();
    expect(h.registry.has('testing_delay')).toBe(true);
    expect(h.built()).toBe(1);
    expect(h.live.offered('general')).toContain('testing_delay');
    expect(h.live.offered('ddr_authoring')).not.toContain('testing_delay');
    expect(h.lines.some((line) => line.msg.includes('joins modes this host does not have (no_such_mode)'))).toBe(true);
    expect(notified).toBe(0); // told when the turn ends
    await told();
    expect(notified).toBe(1);

    h.host.toolsChanged([CalculatorTool, joining(DelayTool, ['general'])].slice(0, 1));
    expect(h.registry.has('testing_delay')).toBe(false);
    expect(h.live.offered('general')).not.toContain('testing_delay');
    expect(h.live.retired('testing_delay')).toContain('is no longer offered');
    await told();
    expect(notified).toBe(2);
    // The same list again changes nothing and tells no one.
    h.host.toolsChanged([CalculatorTool]);
    await told();
    expect(notified).toBe(2);
  });

  /** A harness whose package alternates two lists (`report(i)`), and the count of tellings heard. */
  async function alternating() {
    const h = await harness();
    const heard = { count: 0 };
    h.live.onChange(() => void heard.count++);
    const withDelay = [CalculatorTool, joining(DelayTool, ['general'])];
    const report = (i: number) => h.host.toolsChanged(i % 2 === 0 ? withDelay : [CalculatorTool]);
    return { h, heard, report };
  }

  it('tells its listeners once for a package that reports 10,000 lists in one turn, and applies the last', async () => {
    const { h, heard, report } = await alternating();
    for (let i = 0; i < 10_000; i++) report(i);
    expect(h.registry.has('testing_delay')).toBe(false); // the last list (odd) has no delay tool
    await told();
    expect(heard.count).toBe(1);
  });

  it('tells its listeners at most once per 100 ms for a package that reports a new list in every turn', async () => {
    const { heard, report } = await alternating();
    const started = Date.now();
    let reports = 0;
    while (Date.now() - started < 500) {
      report(reports++);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await told();
    const elapsed = Date.now() - started;
    expect(reports).toBeGreaterThan(20); // many turns, each with a change
    expect(heard.count).toBeGreaterThan(0);
    expect(heard.count).toBeLessThanOrEqual(Math.ceil(elapsed / MIN_GAP_MS) + 1);
  });

  it("a tool a package adds while the host runs belongs to that package, for a principal's packages permission", async () => {
    const h = await harness();
    const principals = new PrincipalTable(
      { agent: { packages: ['host-tools'] }, other: { packages: ['quiet'] } },
      ['agent', 'other'],
      [],
    );
    const permissions = new HostPermissions(principals, [], h.live);
    expect(permissions.mayCall('agent', 'testing_delay')).toBe(false); // no package offers it yet
    h.host.toolsChanged([CalculatorTool, joining(DelayTool, ['general'])]);
    expect(permissions.packageOf('testing_delay')).toBe('host-tools');
    expect(permissions.mayCall('agent', 'testing_delay')).toBe(true);
    expect(permissions.mayCall('other', 'testing_delay')).toBe(false);
    expect(permissions.mayCall('other', 'testing_ping_pong')).toBe(true);
    h.host.toolsChanged([CalculatorTool]);
    expect(permissions.mayCall('agent', 'testing_delay')).toBe(false); // withdrawn: no longer the package's
  });

  it("never lets a package take another package's tool, nor breaks on a list it cannot read", async () => {
    const h = await harness();
    const revision = h.registry.revision;
    h.host.toolsChanged([CalculatorTool, PingPongTool]);
    expect(h.registry.get('testing_ping_pong')!.toolClass).toBe(PingPongTool);
    expect(h.live.retired('testing_ping_pong')).toContain('DUPLICATE_TOOL');
    h.host.toolsChanged('not a list' as never);
    h.host.toolsChanged([{ ToolName: 42 } as never, CalculatorTool]);
    expect(h.registry.has('testing_calculator')).toBe(true);
    expect(h.lines.some((line) => line.msg.includes('cannot read'))).toBe(true);
    expect(h.lines.some((line) => line.msg.includes('a class without a ToolName'))).toBe(true);
    expect(h.registry.revision).toBe(revision);
  });
});
