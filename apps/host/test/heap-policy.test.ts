import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { avoidPretenuring, boundHeapGrowth } from '../src/heap-policy.js';
import { runCli, scratch } from './support.js';

// How far `aptix serve` lets the JS heap grow past what it keeps (issue 13: abandoned MCP sessions
// must not leave the host large). The memory it saves is measured in bench section 8, not here.

const space = scratch();
afterAll(() => space.cleanup());

describe('heapGrowthPercent / APTIX_HEAP_GROWTH_PERCENT', () => {
  const load = (env: NodeJS.ProcessEnv) => loadConfig({ env, cwd: space.dir });

  it('is 50 by default, and takes 0 (V8 decides) up to 1000 from the environment or the file', async () => {
    expect((await load({})).heapGrowthPercent).toBe(50);
    expect((await load({ APTIX_HEAP_GROWTH_PERCENT: '0' })).heapGrowthPercent).toBe(0);
    expect((await load({ APTIX_HEAP_GROWTH_PERCENT: '1000' })).heapGrowthPercent).toBe(1000);
    const file = join(space.dir, 'heap.json');
    writeFileSync(file, JSON.stringify({ heapGrowthPercent: 120 }));
    expect((await loadConfig({ env: {}, cwd: space.dir, file })).heapGrowthPercent).toBe(120);
    expect(
      (await loadConfig({ env: { APTIX_HEAP_GROWTH_PERCENT: '30' }, cwd: space.dir, file })).heapGrowthPercent,
    ).toBe(30);
  });

  it.each(
    ['-1', '1.5', '1001', 'lots', '50%', '1e3', ' 50', '0x10', 'x'.repeat(10_000)].map((value) => [
      value.slice(0, 12),
      value,
    ]),
  )('refuses APTIX_HEAP_GROWTH_PERCENT="%s", naming it and what it takes', async (_label, value) => {
    const error = await load({ APTIX_HEAP_GROWTH_PERCENT: value }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('APTIX_HEAP_GROWTH_PERCENT');
    expect((error as Error).message).toContain('0 to 1000');
    expect((error as Error).message.length).toBeLessThan(400);
  });

  it('refuses a file value out of range at start-up, naming the field, before the host listens', async () => {
    const file = join(space.dir, 'bad-heap.json');
    writeFileSync(file, JSON.stringify({ heapGrowthPercent: 5000 }));
    const run = await runCli(['serve', '--config', file, '--port', '0'], { env: { APTIX_DB: space.db } });
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toContain('heapGrowthPercent');
    expect(run.stdout + run.stderr).not.toMatch(/\n\s+at /);
  });

  it('leaves V8 its own choice at 0, and a --heap-growing-percent given to node wins', () => {
    expect(boundHeapGrowth(0, [])).toBe(false);
    expect(boundHeapGrowth(80, ['--heap-growing-percent=20'])).toBe(false);
    expect(boundHeapGrowth(80, ['--heap_growing_percent', '20'])).toBe(false);
    expect(boundHeapGrowth(80, ['--max-old-space-size=512'])).toBe(true);
  });
});

describe('allocation-site pretenuring', () => {
  it('is turned off for the host unless node was given its own --[no-]allocation-site-pretenuring', () => {
    expect(avoidPretenuring(['--allocation-site-pretenuring'])).toBe(false);
    expect(avoidPretenuring(['--no-allocation-site-pretenuring'])).toBe(false);
    expect(avoidPretenuring(['--allocation_site_pretenuring'])).toBe(false);
    expect(avoidPretenuring(['--no_allocation_site_pretenuring'])).toBe(false);
    expect(avoidPretenuring(['--max-old-space-size=512'])).toBe(true);
  });
});
