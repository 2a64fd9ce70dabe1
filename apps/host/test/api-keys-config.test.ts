/**
 * How APTIX_API_KEYS and `apiKeys` are read, through the real CLI (`aptix check` and `aptix serve` as
 * child processes): set but holding no key, or an entry whose name is not a name, stops start-up with a
 * message naming the entry's position and the rule, never a key; a named key that holds "=" works.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logLine, runCli, scratch, startHost, type CliRun } from './support.js';

const KEY = 'k'.repeat(24) + '0123456789';
const OTHER = 'o'.repeat(24) + '0123456789';
/** A base64-style key with "=" in it, as `openssl rand -base64 32` gives. */
const WITH_EQUALS = 'q8Vd+/Zr3nW2sXy0Tb5uLc9hPa7eMf1gKj4iOo6l=';
const KEYS = [KEY, OTHER, WITH_EQUALS];

/** Runs `aptix <command>` with the env in a scratch folder (optionally with a config file) and returns the run. */
async function start(
  command: 'check' | 'serve',
  env: Record<string, string>,
  file?: Record<string, unknown>,
): Promise<CliRun> {
  const space = scratch();
  try {
    const args = command === 'serve' ? ['serve', '--port', '0'] : ['check'];
    if (file !== undefined) writeFileSync(join(space.dir, 'aptix.config.json'), JSON.stringify(file));
    return await runCli(file === undefined ? args : [...args, '--config', join(space.dir, 'aptix.config.json')], {
      env: { APTIX_DB: space.db, ...env },
      cwd: space.dir,
      timeoutMs: 15_000,
    });
  } finally {
    space.cleanup();
  }
}

function expectRefused(run: CliRun, message: RegExp): void {
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr).toMatch(message);
  for (const key of KEYS) expect(run.stderr + run.stdout).not.toContain(key);
}

describe('API keys that are set but hold none', () => {
  it.each(['check', 'serve'] as const)(
    'aptix %s refuses APTIX_API_KEYS=" , ", saying it is set but holds no key and how to fix it',
    async (command) => {
      for (const value of [' , ', ',', ' ,, , ']) {
        const run = await start(command, { APTIX_API_KEYS: value });
        expectRefused(
          run,
          /APTIX_API_KEYS is set but holds no key .*Fix: give at least one key, each "<name>=<key>" .*or remove APTIX_API_KEYS to run without keys/,
        );
      }
    },
  );

  it('refuses it next to APTIX_API_KEY too: the list was meant to hold keys', async () => {
    expectRefused(
      await start('serve', { APTIX_API_KEY: KEY, APTIX_API_KEYS: ' , ' }),
      /APTIX_API_KEYS is set but holds no key/,
    );
  });

  it('refuses "apiKeys": [] in the configuration file', async () => {
    expectRefused(
      await start('check', {}, { apiKeys: [] }),
      /apiKeys in .*aptix\.config\.json is set but holds no key/,
    );
  });

  it('an empty APTIX_API_KEYS is not set: the host starts without keys, as before', async () => {
    const run = await start('check', { APTIX_API_KEYS: '' });
    expect(run.code, run.stderr).toBe(0);
  });
});

describe('an entry whose name is not a name', () => {
  const rule = new RegExp(
    String.raw`entry (\d) has an "=" within its first 65 characters, so what comes before it is a key ` +
      String.raw`name, and it is not a valid one: a name is 1 to 64 letters, digits, "_", "\." or "-" ` +
      String.raw`\(\[A-Za-z0-9_\.-\]\{1,64\}\)\. Fix: write the entry as <name>=<key>`,
  );

  it.each(['check', 'serve'] as const)(
    'aptix %s refuses ops!=<key>, naming the entry and the rule, never the key',
    async (command) => {
      const run = await start(command, { APTIX_API_KEYS: `ops!=${KEY}` });
      expectRefused(run, rule);
      expect(rule.exec(run.stderr)?.[1]).toBe('1');
      expect(run.stderr).not.toContain('ops!');
    },
  );

  it('names the position of the bad entry among good ones, in the environment and in the file', async () => {
    for (const entries of [
      [`ops=${KEY}`, `bad name=${OTHER}`],
      [`ops=${KEY}`, `=${OTHER}`],
      [`ops=${KEY}`, `${'n'.repeat(63)}!=${OTHER}`],
    ]) {
      const fromEnv = await start('check', { APTIX_API_KEYS: entries.join(',') });
      expectRefused(fromEnv, /APTIX_API_KEYS entry 2 has an "=" within its first 65 characters/);
      const fromFile = await start('check', {}, { apiKeys: entries });
      expectRefused(fromFile, /apiKeys in .*aptix\.config\.json entry 2 has an "=" within its first 65 characters/);
    }
  });

  it('a named key that holds "=" is accepted and works; so is an unnamed key whose first "=" comes after position 65', async () => {
    const unnamed = 'u'.repeat(70) + '==';
    const space = scratch();
    const host = await startHost({
      env: { APTIX_DB: space.db, APTIX_API_KEYS: `ci=${WITH_EQUALS}, ${unnamed}`, LOG_LEVEL: 'info' },
    });
    try {
      for (const key of [WITH_EQUALS, unnamed]) {
        const answer = await fetch(`${host.url}/v1/tools`, { headers: { authorization: `Bearer ${key}` } });
        expect(answer.status, key).toBe(200);
      }
      expect(
        (await fetch(`${host.url}/v1/tools`, { headers: { authorization: `Bearer ${WITH_EQUALS.slice(0, -1)}` } }))
          .status,
      ).toBe(401);
      // The access lines name each key by its name: "ci", and "key2" after its position.
      for (const actor of ['ci', 'key2'])
        expect(await logLine(host, (line) => line.msg === 'request completed' && line.actor === actor)).toMatchObject({
          statusCode: 200,
        });
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});
