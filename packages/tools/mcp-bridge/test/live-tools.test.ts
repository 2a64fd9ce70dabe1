import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AgentToolExecutor, AgentToolRegistry, CapturingAdminLogger, ExecutionErrorCode } from '@aptix/tool-contract';
import { BridgeErrorCode, McpBridge, parseBridgeOptions, type BridgedToolClass } from '../src/index.js';
import { EVERYTHING, freePort, LIVE, stop, text } from './servers.js';

/**
 * A bridge whose host follows tool changes, as `aptix` does: every list the bridge reports replaces
 * the registry's bridged tools (the host's own follower, with modes and MCP notices, is tested in
 * apps/host). Against a server on the official v2 server SDK that changes its tools on command.
 */
async function liveHarness(options: object) {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  const reports: Array<readonly BridgedToolClass[]> = [];
  const sync = (tools: readonly BridgedToolClass[]) => {
    reports.push(tools);
    for (const name of registry.names()) if (!tools.some((tool) => tool.ToolName === name)) registry.unregister(name);
    for (const tool of tools) {
      if (registry.get(tool.ToolName)?.toolClass === tool) continue;
      registry.unregister(tool.ToolName);
      registry.registerTool(tool);
    }
  };
  const bridge = await McpBridge.start(
    parseBridgeOptions({ name: 'live', connectTimeoutMs: 30_000, modes: ['general'], ...options }),
    { logger, onToolsChanged: sync },
  );
  registry.registerTools(bridge.tools);
  const executor = new AgentToolExecutor({ registry, logger });
  const call = async (name: string, args: unknown) => {
    const result = await executor.execute(name, JSON.stringify(args), { sessionId: 's-1' });
    return { ...result, value: result.successful ? (JSON.parse(result.result) as Record<string, unknown>) : undefined };
  };
  /** Calls a class directly, as a caller holding it from before a change would. */
  const direct = async (toolClass: BridgedToolClass, args: unknown) =>
    new toolClass({ logger }).execute(JSON.stringify(args), { sessionId: 's-1' }, new AbortController().signal);
  const control = async (args: object) => expect((await call('live_control', args)).errors).toEqual([]);
  const tags = () => logger.events().map((event) => event.tag);
  return { bridge, registry, logger, reports, call, direct, control, tags };
}

/** The fixture over Streamable HTTP, as its own process: `http` (2025 sessions) or `modern` (2026-07-28 only). */
function overHttp(label: string, mode: 'http' | 'modern', protocol: 'legacy' | '2026-07-28') {
  return {
    label,
    child: undefined as ChildProcess | undefined,
    async options() {
      const port = await freePort();
      this.child = spawn(process.execPath, [LIVE, mode, String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
      await new Promise<void>((resolve, reject) => {
        this.child!.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('listening on port') && resolve());
        this.child!.once('exit', (code) => reject(new Error(`live-server exited (${code})`)));
      });
      return { protocol, http: { url: `http://127.0.0.1:${port}/mcp` } };
    },
  };
}

const transports = [
  {
    label: 'stdio',
    options: async () => ({ stdio: { command: process.execPath, args: [LIVE, 'stdio'] } }),
    child: undefined as ChildProcess | undefined,
  },
  overHttp('Streamable HTTP, 2025 sessions', 'http', 'legacy'),
  overHttp("Streamable HTTP, 2026-07-28 (the SDK's createMcpHandler, a server per request)", 'modern', '2026-07-28'),
];

describe.each(transports)('a server that changes its tools while the host runs, over $label', (transport) => {
  let h: Awaited<ReturnType<typeof liveHarness>>;
  beforeAll(async () => {
    h = await liveHarness(await transport.options());
  });
  afterAll(async () => {
    await h?.bridge.close();
    await stop(transport.child);
  });

  it('offers a tool the server adds, contract-checked and in the modes the options give', async () => {
    await h.control({ action: 'add', count: 1 });
    await vi.waitFor(() => expect(h.registry.has('live_extra_1')).toBe(true), { timeout: 10_000, interval: 20 });
    const added = h.bridge.tools.find((tool) => tool.ToolName === 'live_extra_1')!;
    expect(added.Modes).toEqual(['general']);
    expect(added.RemoteToolName).toBe('extra-1');
    expect(text((await h.call('live_extra_1', { x: 7 })).value)).toBe('extra-1: 7');
    expect(h.logger.events().find((event) => event.tag === '[McpBridge_ToolAdded]')?.message).toContain(
      'offered as live_extra_1',
    );
  });

  it('offers a changed schema as a new class once it passes the contract, and logs what changed', async () => {
    const before = h.registry.get('live_shape')!.toolClass;
    await h.control({ action: 'change_shape' });
    await vi.waitFor(() => expect(h.registry.get('live_shape')!.toolClass).not.toBe(before), {
      timeout: 10_000,
      interval: 20,
    });
    expect(h.registry.get('live_shape')!.parameters).toMatchObject({ required: ['a', 'b'] });
    expect(h.logger.events().find((event) => event.tag === '[McpBridge_SchemaChanged]')?.message).toContain(
      'arguments added: b',
    );
    expect((await h.call('live_shape', { a: 1 })).errors[0]?.code).toBe(ExecutionErrorCode.INVALID_ARGUMENTS);
    expect(text((await h.call('live_shape', { a: 1, b: 2 })).value)).toBe('shape: {"a":1,"b":2}');
  });

  it('stops offering a removed tool; a caller still holding its class gets REMOTE_TOOL_GONE', async () => {
    const held = h.registry.get('live_extra_1')!.toolClass as BridgedToolClass;
    await h.control({ action: 'remove', name: 'extra-1' });
    await vi.waitFor(() => expect(h.registry.has('live_extra_1')).toBe(false), { timeout: 10_000, interval: 20 });
    const gone = await h.direct(held, { x: 1 });
    expect(gone.errors[0]?.code).toBe(BridgeErrorCode.REMOTE_TOOL_GONE);
  });

  it('refuses an invalid new schema: the tool is no longer offered, the reason is logged, the rest stay', async () => {
    const held = h.registry.get('live_shape')!.toolClass as BridgedToolClass;
    await h.control({ action: 'break_shape' });
    await vi.waitFor(() => expect(h.registry.has('live_shape')).toBe(false), { timeout: 10_000, interval: 20 });
    const rejected = h.logger.events().find((event) => event.tag === '[McpBridge_SchemaRejected]')!;
    expect(rejected.level).toBe('error');
    expect(rejected.message).toMatch(/changed "shape", and the new definition fails the contract: .*refers to itself/);
    const refused = await h.direct(held, { a: 1, b: 2 });
    expect(refused.errors[0]?.code).toBe(BridgeErrorCode.REMOTE_SCHEMA_REJECTED);
    expect(text((await h.call('live_echo', { text: 'still here' })).value)).toBe('echo: still here');
    expect(h.bridge.status('shape').kind).toBe('rejected');
    // Listed again unchanged (another tool was added), the refused tool is not logged again.
    const listings = h.bridge.listings;
    const logged = h.logger.events().length;
    await h.control({ action: 'add', count: 1 });
    await vi.waitFor(() => expect(h.bridge.listings).toBeGreaterThan(listings), { timeout: 10_000, interval: 20 });
    expect(
      h.logger
        .events()
        .slice(logged)
        .filter((event) => /SchemaRejected|ToolSkipped/.test(event.tag)),
    ).toEqual([]);
  });
});

describe('attacks by a server that changes its tools (stdio)', () => {
  let h: Awaited<ReturnType<typeof liveHarness>>;
  beforeAll(async () => {
    h = await liveHarness({ stdio: { command: process.execPath, args: [LIVE, 'stdio'] }, maxTools: 200 });
  });
  afterAll(() => h?.bridge.close());

  it('a flood of tools/list_changed costs a few listings, not one each, and changes nothing', async () => {
    const listings = h.bridge.listings;
    const reports = h.reports.length;
    await h.control({ action: 'flood', count: 5_000 });
    // Calls go on meanwhile, and the flood is followed: one listing once it ends, at most a few during it.
    expect(text((await h.call('live_echo', { text: 'during' })).value)).toBe('echo: during');
    await vi.waitFor(() => expect(h.bridge.listings).toBeGreaterThan(listings), { timeout: 10_000, interval: 20 });
    await new Promise((resolve) => setTimeout(resolve, 600));
    // At most one listing per 250 ms while the flood is being read, however long a loaded machine takes: far fewer than one each.
    expect(h.bridge.listings - listings).toBeLessThan(50);
    expect(h.reports.length).toBe(reports); // the same tools: nothing for the host to do
  });

  it('a tool renamed to collide with another bridged name never takes that name: it gets a hashed one', async () => {
    const held = h.registry.get('live_shape')!.toolClass;
    await h.control({ action: 'rename', name: 'echo', to: 'Shape' });
    await vi.waitFor(() => expect(h.registry.has('live_echo')).toBe(false), { timeout: 10_000, interval: 20 });
    expect(h.registry.get('live_shape')!.toolClass).toBe(held);
    const renamed = h.bridge.tools.find((tool) => tool.RemoteToolName === 'Shape')!;
    expect(renamed.ToolName).toMatch(/^live_shape_[0-9a-f]{8}$/);
    expect(text((await h.call(renamed.ToolName, { text: 'renamed' })).value)).toBe('echo: renamed');
  });

  it('a server that adds 10,000 tools gets "maxTools" of them offered, one log line for the rest, and the host keeps answering', async () => {
    const before = h.registry.size;
    await h.control({ action: 'add', count: 10_000 });
    await vi.waitFor(() => expect(h.registry.size).toBe(200), { timeout: 60_000, interval: 50 });
    // The tools offered before keep their place.
    expect(h.registry.has('live_shape')).toBe(true);
    expect(h.registry.has('live_control')).toBe(true);
    expect(before).toBeLessThan(200);
    const tooMany = h.logger.events().filter((event) => event.tag === '[McpBridge_TooManyTools]');
    expect(tooMany.length).toBeGreaterThanOrEqual(1);
    expect(tooMany.length).toBeLessThan(5);
    expect(tooMany[0]!.message).toMatch(/offers \d+ tools, more than its "maxTools" \(200\)/);
    expect(h.logger.events().filter((event) => event.tag === '[McpBridge_ToolAdded]').length).toBeLessThan(50);
    expect(text((await h.call('live_extra_1', { x: 1 })).value)).toBe('extra-1: 1');
  }, 120_000); // the server itself takes seconds to register 10,000 tools, more on a loaded machine
});

describe('server-everything, which changes its tool list right after start-up', () => {
  it('is listed again when it announces the change, and nothing changes for the host when its new tools cannot run here', async () => {
    // It registers its capability-dependent tools once initialized and sends tools/list_changed; the
    // bridge declares no roots, sampling or elicitation and runs no MCP tasks, so none of them is offered.
    const h = await liveHarness({
      name: 'everything',
      stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    });
    try {
      await vi.waitFor(() => expect(h.bridge.listings).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 20 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(h.reports).toEqual([]);
      expect(text((await h.call('everything_echo', { message: 'still here' })).value)).toBe('Echo: still here');
    } finally {
      await h.bridge.close();
    }
  });
});
