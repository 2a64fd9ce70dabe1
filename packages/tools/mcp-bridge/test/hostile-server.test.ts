/**
 * Issue 33, 5: a server that lists tools no SDK-built server would (an inputSchema that is not an
 * object, or none), one that churns its tool list, and approval gates chosen by configuration. The
 * server is a real process (test/fixtures/hostile-server.mjs), bridged, registered and called as a host does.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { McpBridge, McpBridgeError, parseBridgeOptions } from '../src/index.js';
import { needsApproval } from '../src/bridge.js';
import { REPEATS_PER_WINDOW } from '../src/repeat-limiter.js';
import { CapturingAdminLogger } from '@aptix/tool-contract';
import { bridgeHarness, HOSTILE } from './servers.js';

const hostile = (extra: object = {}, args: string[] = []) => ({
  name: 'hostile',
  prefix: 'h',
  stdio: { command: process.execPath, args: [HOSTILE, ...args] },
  ...extra,
});

describe('a server listing tools that are not valid MCP tools', () => {
  let h: Awaited<ReturnType<typeof bridgeHarness>> | undefined;
  afterAll(() => h?.bridge.close());

  it('skips each of them, naming it and why, and offers the others (invalidTools: "skip", the default)', async () => {
    h = await bridgeHarness(hostile());
    expect(h.registry.names().sort()).toEqual(['h_append', 'h_plain', 'h_read', 'h_write']);
    const skipped = h.logger.events().filter((event) => event.tag === '[McpBridge_ToolSkipped]');
    for (const name of ['string-schema', 'no-schema', 'array-schema']) {
      const line = skipped.find((event) => event.message.includes(`its tool "${name}" is not offered`));
      expect(line?.message).toMatch(
        /its definition is not a valid MCP tool \(inputSchema.*\); an inputSchema must be a JSON Schema object with "type": "object"/,
      );
      expect(h.bridge.report().find((tool) => tool.remoteName === name)?.offered).toBe(false);
    }
    expect((await h.call('h_read', { text: 'x' })).successful).toBe(true);
  });

  it('fails start-up naming the tool with invalidTools: "fail"', async () => {
    const started = McpBridge.start(
      parseBridgeOptions({ connectTimeoutMs: 30_000, ...hostile({ invalidTools: 'fail' }) }),
      { logger: new CapturingAdminLogger() },
    );
    await expect(started).rejects.toThrow(McpBridgeError);
    await expect(started).rejects.toThrow(
      /its tool "string-schema" cannot be offered: its definition is not a valid MCP tool/,
    );
  });
});

describe('approval gates for bridged tools, by configuration', () => {
  it.each([
    ['none', []],
    ['all', ['h_append', 'h_plain', 'h_read', 'h_write']],
    // MCP: a tool is destructive unless it says it is read-only or says destructiveHint: false.
    ['destructive', ['h_plain', 'h_write']],
    [
      ['write', 'append'],
      ['h_append', 'h_write'],
    ],
  ])('approval %j gates %j', async (approval, gated) => {
    const h = await bridgeHarness(hostile({ approval }));
    try {
      expect(
        h.registry
          .names()
          .filter((name) => h.registry.get(name)!.approval === 'always')
          .sort(),
      ).toEqual(gated);
      expect(h.registry.names().filter((name) => h.registry.get(name)!.approval === 'never').length).toBe(
        4 - gated.length,
      );
    } finally {
      await h.bridge.close();
    }
  });

  it('reads annotations as MCP defines them', () => {
    expect(needsApproval('destructive', 'x', undefined)).toBe(true);
    expect(needsApproval('destructive', 'x', { readOnlyHint: true, destructiveHint: true })).toBe(false);
    expect(needsApproval('destructive', 'x', { destructiveHint: false })).toBe(false);
    expect(needsApproval(undefined, 'x', undefined)).toBe(false);
  });

  it('refuses an approval option it does not know, naming the field', () => {
    expect(() => parseBridgeOptions(hostile({ approval: 'sometimes' }))).toThrow(/options\.approval/);
    expect(() => parseBridgeOptions(hostile({ approval: [] }))).toThrow(/options\.approval/);
  });
});

describe('a server that churns its tool list', () => {
  it('logs each kind of repeated line at most REPEATS_PER_WINDOW times, then one line with how many were held back', async () => {
    const logger = new CapturingAdminLogger();
    const bridge = await McpBridge.start(
      parseBridgeOptions({ connectTimeoutMs: 30_000, ...hostile({}, ['--churn']) }),
      { logger, onToolsChanged: () => {} },
    );
    try {
      // Each listing replaces all 50 tools: 50 gone and 50 added; four listings are 200 of each.
      await vi.waitFor(() => expect(bridge.listings).toBeGreaterThanOrEqual(5), { timeout: 30_000, interval: 20 });
    } finally {
      await bridge.close();
    }
    const gone = logger.events().filter((event) => event.tag === '[McpBridge_ToolGone]');
    expect(gone.length).toBe(REPEATS_PER_WINDOW);
    const held = logger.events().filter((event) => event.tag === '[McpBridge_LogSuppressed]');
    const goneHeld = held.find((event) => event.message.includes('more [McpBridge_ToolGone] lines were not logged'));
    expect(goneHeld?.message).toMatch(
      /^MCP server "hostile": \d+ more \[McpBridge_ToolGone\] lines were not logged .* The last: MCP server "hostile" no longer offers "tool-\d+-\d+"/,
    );
    expect(Number(/: (\d+) more/.exec(goneHeld!.message)![1])).toBeGreaterThanOrEqual(4 * 50 - REPEATS_PER_WINDOW);
  });
});
