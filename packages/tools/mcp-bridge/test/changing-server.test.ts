import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExecutionErrorCode } from '@aptix/tool-contract';
import { BridgeErrorCode } from '../src/index.js';
import { bridgeHarness, CHANGING, text } from './servers.js';

describe('a server that changes its tool list while the host runs (2026-07-28 revision)', () => {
  let h: Awaited<ReturnType<typeof bridgeHarness>>;
  beforeAll(async () => {
    // A generous connect time-out: on a loaded machine the 2026-07-28 probe (a second server process) may be slow to answer.
    h = await bridgeHarness({
      name: 'changing',
      prefix: 'calc',
      connectTimeoutMs: 30_000,
      stdio: { command: process.execPath, args: [CHANGING] },
    });
  });
  afterAll(() => h?.bridge.close());

  it('speaks 2026-07-28 with a server that offers it, and offers its tools', async () => {
    expect(h.bridge.protocolVersion).toBe('2026-07-28');
    expect(h.registry.names().sort()).toEqual([
      'calc_add',
      'calc_configure',
      'calc_linger',
      'calc_reshape',
      'calc_retire',
      'calc_tree',
    ]);
    const result = await h.call('calc_add', { a: 1, b: 2 });
    expect(result.value?.structuredContent).toEqual({ value: 3 });
  });

  it('never answers cancelled or TIMEOUT for a tool that may change things: the server may have finished first', async () => {
    const cut = await h.call('calc_linger', {}, { timeoutMs: 200 });
    expect(cut.errors[0]).toEqual({
      code: ExecutionErrorCode.OUTCOME_UNKNOWN,
      message: expect.stringContaining(
        'calc_linger did not finish in time; MCP server "changing" was told to stop, but it may have finished first',
      ),
    });
    const controller = new AbortController();
    const pending = h.call('calc_linger', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const cancelled = await pending;
    expect(cancelled.successful).toBe(false);
    expect(cancelled.errors[0]?.code).toBe(ExecutionErrorCode.OUTCOME_UNKNOWN);
    expect(h.registry.get('calc_linger')!.usageMetadata).toContain('- OUTCOME_UNKNOWN: ');
  });

  it('offers a schema strict mode cannot take with strict: false, and its report says why', async () => {
    expect(h.registry.get('calc_add')!.strict).toBe(true);
    const configure = h.registry.get('calc_configure')!;
    expect(configure.strict).toBe(false);
    expect(h.registry.definitions('responses', ['calc_configure'])[0]!.strict).toBe(false);
    const report = h.bridge.report().find((tool) => tool.remoteName === 'configure')!;
    expect(report.strictProblems.join(' ')).toContain("open objects ('additionalProperties' other than false)");
    const result = await h.call('calc_configure', { settings: { colour: 'blue', size: 3 } });
    expect(text(result.value)).toBe('colour,size');
  });

  it('re-lists on tools/list_changed: a changed schema is logged and checked, a removed tool answers REMOTE_TOOL_GONE, a new one is announced', async () => {
    expect(text((await h.call('calc_reshape', {})).value)).toBe('reshaped');
    await vi.waitFor(() => expect(h.bridge.status('retire').kind).toBe('gone'), { timeout: 10_000, interval: 20 });
    await vi.waitFor(() => expect(h.bridge.status('add').kind).toBe('changed'), { timeout: 10_000, interval: 20 });

    const tags = h.logger.events().map((event) => event.tag);
    expect(tags).toEqual(
      expect.arrayContaining([
        '[McpBridge_SchemaChanged]',
        '[McpBridge_ToolGone]',
        '[McpBridge_ToolAdded]',
        '[McpBridge_SchemaRejected]',
      ]),
    );
    const changed = h.logger.events().find((event) => event.tag === '[McpBridge_SchemaChanged]')!;
    expect(changed.message).toContain('arguments added: c');
    expect(h.logger.events().find((event) => event.tag === '[McpBridge_ToolAdded]')!.message).toContain('"multiply"');

    // The new schema is what calls are checked against now: the old arguments are refused here, with the reason.
    const old = await h.call('calc_add', { a: 1, b: 2 });
    expect(old.errors[0]?.code).toBe(ExecutionErrorCode.INVALID_ARGUMENTS);
    expect(old.errors[0]?.message).toContain("changed this tool's arguments");
    expect((await h.call('calc_add', { a: 1, b: 2, c: 3 })).value?.structuredContent).toEqual({ value: 6 });

    const gone = await h.call('calc_retire', {});
    expect(gone.errors[0]?.code).toBe(BridgeErrorCode.REMOTE_TOOL_GONE);
    const rejected = await h.call('calc_tree', { label: 'x' });
    expect(rejected.errors[0]?.code).toBe(BridgeErrorCode.REMOTE_SCHEMA_REJECTED);
    expect(rejected.errors[0]?.message).toContain('refers to itself');
  });
});

describe('the same server through the 2025 handshake', () => {
  it('connects with protocol "legacy" and calls the same tools', async () => {
    const h = await bridgeHarness({
      name: 'changing',
      protocol: 'legacy',
      stdio: { command: process.execPath, args: [CHANGING] },
    });
    try {
      expect(h.bridge.protocolVersion).toMatch(/^2025-/);
      expect((await h.call('changing_add', { a: 20, b: 22 })).value?.structuredContent).toEqual({ value: 42 });
    } finally {
      await h.bridge.close();
    }
  });
});
