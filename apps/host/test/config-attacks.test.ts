/**
 * The configuration fields a host's operator writes, attacked as the route tests attack a client's
 * input: odd spellings, keys that name the prototype, values at and past their extremes. Each must
 * stop `aptix check` with a message naming the field and what to write instead, never start a host
 * that misbehaves later (a prune timer past Node's longest fires every millisecond; an age past a
 * safe integer is refused by the store on every prune).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, scratch } from './support.js';
import { UNIT_PACKAGES } from './unit-fixture.js';

const space = scratch();
afterAll(() => space.cleanup());

let files = 0;
async function check(config: Record<string, unknown> | string): Promise<{ code: number | null; text: string }> {
  const file = join(space.dir, `config-${files++}.json`);
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
  const run = await runCli(['--config', file, 'check'], { env: { APTIX_DB: space.db } });
  return { code: run.code, text: run.stdout + run.stderr };
}

describe('promptModes and resourceModes', () => {
  it.each([
    ['promptModes', 'constructor', ['fixture_greeting']],
    ['promptModes', 'toString', ['fixture_greeting']],
    ['resourceModes', 'hasOwnProperty', ['fixture_user']],
  ])(
    '%s naming mode "%s", a name every object has, is an unknown mode, with the valid ones',
    async (field, mode, names) => {
      const run = await check({ toolPackages: UNIT_PACKAGES, [field]: { [mode]: names } });
      expect(run.code).toBe(1);
      expect(run.text).toContain(`names mode "${mode}", which does not exist. Valid modes: general`);
    },
  );

  it('a mode key spelt against the mode-key rule (upper case, __proto__, a space) is refused naming the field', async () => {
    for (const mode of ['General', 'tool diagnostics', '__proto__']) {
      // JSON.parse keeps "__proto__" as an own key, as a file written by hand would have it.
      const file = `{"toolPackages":${JSON.stringify(UNIT_PACKAGES)},"promptModes":{${JSON.stringify(mode)}:["fixture_greeting"]}}`;
      const run = await check(file);
      // 2 when the file's schema refuses the key, 1 when the host finds no such mode: both name the field.
      expect([1, 2], mode).toContain(run.code);
      expect(run.text, mode).toContain('promptModes');
      expect(run.text, mode).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
    }
  });

  it('a prompt name in place of a list, an empty name, and a name of another kind are refused', async () => {
    const notList = await check({ toolPackages: UNIT_PACKAGES, promptModes: { general: 'fixture_greeting' } });
    expect(notList.code).toBe(2);
    expect(notList.text).toContain('promptModes.general must be array');
    const empty = await check({ toolPackages: UNIT_PACKAGES, resourceModes: { general: [''] } });
    expect(empty.code).toBe(2);
    expect(empty.text).toContain('resourceModes.general');
    // A prompt's name under resourceModes: no resource has it.
    const crossed = await check({ toolPackages: UNIT_PACKAGES, resourceModes: { general: ['fixture_greeting'] } });
    expect(crossed.code).toBe(1);
    expect(crossed.text).toContain(
      'adds resource "fixture_greeting" to mode "general", but no package offers a resource',
    );
  });

  it('a list of 100,000 names stops at the first unknown one, quickly and naming it', async () => {
    const names = Array.from({ length: 100_000 }, (_, i) => `fixture_missing_${i}`);
    const run = await check({ toolPackages: UNIT_PACKAGES, promptModes: { general: names } });
    expect(run.code).toBe(1);
    expect(run.text).toContain('adds prompt "fixture_missing_0" to mode "general"');
    expect(run.text.length).toBeLessThan(10_000);
  });
});

describe('audit retention', () => {
  it.each([
    ['maxAgeDays', 36_501],
    ['maxAgeDays', 1e12],
    ['maxAgeDays', 0],
    ['maxAgeDays', 1.5],
    ['maxRecords', 2 ** 53],
    ['maxRecords', -1],
    ['pruneIntervalMs', 2 ** 31],
    ['pruneIntervalMs', 999],
    ['flushIntervalMs', 60_001],
  ])('audit.%s of %s is refused at start (exit 2), naming the field and the docs', async (field, value) => {
    const run = await check({ audit: { [field]: value } });
    expect(run.code).toBe(2);
    expect(run.text).toContain(`audit.${field} must be`);
    expect(run.text).toContain('docs/hosting.md');
  });

  it('the extremes that are allowed start a host that checks clean', async () => {
    const run = await check({
      audit: {
        maxAgeDays: 36_500,
        maxRecords: Number.MAX_SAFE_INTEGER,
        pruneIntervalMs: 2_147_483_647,
        flushIntervalMs: 60_000,
      },
    });
    expect(run.text).not.toContain('audit.');
    expect(run.code).toBe(0);
  });
});

describe('a field that takes one of a few values', () => {
  it.each([
    ['sessions', 'sqliteAuditWriter', 'thread', '"worker", "inline"'],
    ['sessions', 'sqliteAuditWriter', 5, '"worker", "inline"'],
    ['telemetry', 'otlpProtocol', 'grpc', '"http/protobuf", "http/json"'],
    ['telemetry', 'otlpProtocol', 'HTTP/JSON', '"http/protobuf", "http/json"'],
  ])('%s.%s of %j is refused once, with the values to choose from', async (section, field, value, choices) => {
    const run = await check({ [section]: { [field]: value } });
    expect(run.code).not.toBe(0);
    expect(run.text).toContain(`${section}.${field} must be one of ${choices} (it is ${JSON.stringify(value)})`);
    expect(run.text).not.toContain('must be equal to constant');
  });

  it('a huge value is named cut short', async () => {
    const run = await check({ sessions: { sqliteAuditWriter: 'x'.repeat(100_000) } });
    expect(run.code).not.toBe(0);
    expect(run.text).toContain(
      `sessions.sqliteAuditWriter must be one of "worker", "inline" (it is "${'x'.repeat(39)}…)`,
    );
    expect(run.text.length).toBeLessThan(2_000);
  });
});
