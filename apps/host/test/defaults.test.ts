import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { AptixHost } from '../src/aptix-host.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { composeHost } from '../src/container.js';
import { scratch } from './support.js';

// Defaults the records fix, pinned so a change to any of them fails here. The 30 s cut is read from
// the host as composed, not waited for.

const space = scratch();
afterAll(() => space.cleanup());

describe("the host's defaults", () => {
  it('cuts a tool that sets no limit of its own at 30 s (Story 6.1), and waits 1 s for a stopped tool to settle', async () => {
    const config = await loadConfig({ env: { APTIX_DB: space.db }, cwd: space.dir });
    expect(config.toolTimeoutMs).toBe(30_000);
    expect(config.toolCancelGraceMs).toBe(1_000);
    const container = await composeHost(config, { pino: pino({ level: 'silent' }) });
    try {
      const { executor, registry } = container.cradle;
      expect(executor.defaultTimeoutMs).toBe(30_000);
      expect(executor.cancelGraceMs).toBe(1_000);
      // agent_hello_world sets no TimeoutMs: a call of it that hangs is cut at the host's default.
      expect(registry.get('agent_hello_world')!.timeoutMs).toBeUndefined();
      expect(executor.timeoutOf('agent_hello_world')).toBe(30_000);
    } finally {
      await new AptixHost(container).close();
    }
  });

  it('takes both from aptix.config.json', async () => {
    const file = join(space.dir, 'limits.json');
    writeFileSync(file, JSON.stringify({ toolTimeoutMs: 1_234, toolCancelGraceMs: 56 }));
    const config = await loadConfig({ file, env: { APTIX_DB: space.db }, cwd: space.dir });
    const container = await composeHost(config, { pino: pino({ level: 'silent' }) });
    try {
      expect(container.cradle.executor.timeoutOf('agent_hello_world')).toBe(1_234);
      expect(container.cradle.executor.cancelGraceMs).toBe(56);
    } finally {
      await new AptixHost(container).close();
    }
  });

  it('refuses a grace period that is not a whole number of milliseconds from 0 to 60000', async () => {
    const file = join(space.dir, 'bad-grace.json');
    writeFileSync(file, JSON.stringify({ toolCancelGraceMs: -5 }));
    await expect(loadConfig({ file, env: { APTIX_DB: space.db }, cwd: space.dir })).rejects.toThrow(ConfigError);
    await expect(loadConfig({ file, env: { APTIX_DB: space.db }, cwd: space.dir })).rejects.toThrow(
      /toolCancelGraceMs must be >= 0/,
    );
  });
});

describe('APTIX_MCP_FAST_LANE, read as strictly as every on/off switch', () => {
  const load = (value: string) => loadConfig({ env: { APTIX_MCP_FAST_LANE: value }, cwd: space.dir });

  it('is on by default, and takes on/off, true/false, 1/0 and yes/no in any case', async () => {
    expect((await loadConfig({ env: {}, cwd: space.dir })).mcp.fastLane).toBe(true);
    for (const value of ['off', 'OFF', 'false', '0', 'no']) expect((await load(value)).mcp.fastLane, value).toBe(false);
    for (const value of ['on', 'True', '1', 'yes']) expect((await load(value)).mcp.fastLane, value).toBe(true);
  });

  it.each(['offf', 'disabled', '\u200boff', 'x'.repeat(10_000)])(
    'refuses "%s" rather than guess that it means on',
    async (value) => {
      const error = await load(value).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('APTIX_MCP_FAST_LANE');
      expect((error as Error).message).toContain('on or off');
      expect((error as Error).message.length).toBeLessThan(400);
    },
  );
});
