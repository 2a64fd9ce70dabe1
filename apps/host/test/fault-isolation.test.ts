/**
 * Issue 14: a misbehaving tool package cannot crash, freeze or exhaust the host. Every package here is
 * a real folder with a package.json (test/fixtures/broken), loaded through a real config file by the
 * real `aptix` process. No assertion is about time: waits are bounded only so a broken host fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyWorkerReplaced, failedServe, healthy, invoke, STACK, writeConfig } from './hostile.js';
import { BIN, HOST_ROOT, logLine, runCli, scratch, startHost, type RunningHost } from './support.js';

const space = scratch();
afterAll(() => space.cleanup());

describe('start-up: a broken package fails it with a message naming the package and what it did wrong', () => {
  it.each([
    [
      'an import that never settles (no more silent exit 13)',
      'hanging-import',
      /Tool package "@broken\/hanging-import" \(.*\) did not finish importing within 400 ms/,
    ],
    [
      'a createDependencies that never resolves',
      'hanging-deps',
      /Tool package "@broken\/hanging-deps" \(.*\): createDependencies\(\) did not finish within 400 ms/,
    ],
    [
      'an import that throws a string',
      'throwing-import',
      /Tool package "@broken\/throwing-import" \(.*\) failed to load from .*: importing it threw the string "the configuration file is missing"/,
    ],
    [
      'a createDependencies that returns a string',
      'string-deps',
      /Tool package "@broken\/string-deps" \(.*\): createDependencies\(\) returned the string "abcdefgh"; it must return a plain object/,
    ],
    [
      'a 20 MB usage guide',
      'huge-usage',
      /Tool package "@broken\/huge-usage" has a tool that breaks the contract \(USAGE_METADATA_TOO_LARGE\): .*at most 65536 are allowed/,
    ],
  ])('%s', async (_what, fixture, message) => {
    // Only the hanging package gets a short limit of its own: on a loaded machine the first-party
    // packages, or a 20 MB guide, can take longer than 400 ms to import, and must not fail first.
    const run = await failedServe(
      writeConfig(space.dir, fixture, [
        fixture.startsWith('hanging-') ? { package: fixture, startupTimeoutMs: 400 } : fixture,
      ]),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toMatch(/Fix|must/);
    expect(run.stderr).not.toMatch(STACK);
  });

  it.each([
    ['null', /createDependencies\(\) threw null/],
    ['string', /createDependencies\(\) threw the string "no database"/],
    ['proxy', /createDependencies\(\) threw an object whose message cannot be read \(reading it threw\)/],
    ['getter', /createDependencies\(\) threw an Error whose message cannot be read/],
  ])('whatever createDependencies throws: %s', async (kind, message) => {
    const run = await failedServe(
      writeConfig(space.dir, `throwing-${kind}`, [{ package: 'throwing-setup', options: { kind } }]),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Tool package "@broken/throwing-setup"');
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toContain('UNEXPECTED');
    expect(run.stderr).not.toContain('undefined');
  });

  it('gives an isolated package the same time limit, in its worker', async () => {
    const run = await failedServe(
      writeConfig(space.dir, 'isolated-hang', [
        { package: 'hanging-deps', isolation: 'worker', startupTimeoutMs: 400 },
      ]),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/"@broken\/hanging-deps".*createDependencies\(\) did not finish within 400 ms/);
  });
});

describe('run time, in process: what escapes a tool is contained, and results are bounded', () => {
  let host: RunningHost;
  beforeAll(async () => {
    const config = writeConfig(space.dir, 'in-process', [
      'stray-errors',
      'huge-result',
      'splicing',
      { package: 'throwing-import', optional: true },
    ]);
    host = await startHost({ args: ['--config', config] });
  }, 60_000);
  afterAll(async () => {
    await host?.stop();
  });

  it('skips an optional package that fails to load, saying why', async () => {
    const line = await logLine(host, (entry) => String(entry.msg).startsWith('optional tool package skipped'));
    expect(line.msg).toContain('the string "the configuration file is missing"');
  });

  it.each([
    ['broken_stray_rejection', 'an unhandled promise rejection'],
    ['broken_timer_throw', 'an uncaught exception'],
  ])('%s: logs %s naming the package, and keeps serving every other call', async (tool, what) => {
    expect((await invoke(host, tool)).body.successful).toBe(true);
    const line = await logLine(
      host,
      (entry) => typeof entry.msg === 'string' && entry.msg.startsWith(`contained ${what}`),
    );
    expect(line.toolPackage).toBe('@broken/stray-errors');
    expect(line.msg).toContain('package "@broken/stray-errors"');
    expect(host.child.exitCode).toBeNull();
    expect(await healthy(host)).toBe(true);
    expect((await invoke(host, 'broken_fine')).body).toEqual({ successful: true, result: { fine: true }, errors: [] });
    expect((await invoke(host, 'testing_calculator', { operation: 'add', a: 2, b: 3 })).body.result.value).toBe(5);
  });

  it('refuses a 50 MB result with RESULT_TOO_LARGE, many at once, and stays up', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => invoke(host, 'broken_huge_result')));
    for (const { status, text, body } of results) {
      expect(status).toBe(200);
      expect(text.length).toBeLessThan(2000);
      expect(body.errors[0]!.code).toBe('RESULT_TOO_LARGE');
      expect(body.errors[0]!.message).toContain('limit of 1048576 bytes');
    }
    expect(await healthy(host)).toBe(true);
  }, 60_000);

  it('never splices raw fast-path text that is not JSON into the HTTP reply', async () => {
    const { status, text, body } = await invoke(host, 'broken_splicing');
    expect(status).toBe(200);
    expect(() => JSON.parse(text)).not.toThrow();
    expect(body).toEqual({
      successful: false,
      result: null,
      errors: [{ code: 'MALFORMED_RESULT', message: 'broken_splicing returned a result that is not valid JSON.' }],
    });
    expect(text).not.toContain('injected');
  });
});

describe('run time, isolated in worker threads', () => {
  let host: RunningHost;
  let config: string;
  let closeMarker: string;
  beforeAll(async () => {
    // A mode that offers the isolated tools, so MCP sessions can call them too.
    const modes = { extend: { general: ['iso_echo', 'iso_configured'] } };
    closeMarker = join(space.dir, 'closed.txt');
    config = writeConfig(
      space.dir,
      'isolated',
      [
        {
          package: 'isolated',
          isolation: 'worker',
          workers: 2,
          resourceLimits: { maxOldGenerationSizeMb: 48 },
          options: { extraTool: 'iso_configured', closeMarker },
        },
      ],
      { modes },
    );
    host = await startHost({ args: ['--config', config] });
  }, 60_000);
  afterAll(async () => {
    await host?.stop();
  });

  it('runs the tools in worker threads, with the tools createTools made from the options, the same on HTTP, the CLI and MCP', async () => {
    const echo = await invoke(host, 'iso_echo', { text: 'hi' });
    expect(echo.body.result.echo).toBe('hi');
    expect(echo.body.result.threadId).toBeGreaterThan(0);
    expect((await invoke(host, 'iso_configured')).body.result).toEqual({
      configured: true,
      options: { extraTool: 'iso_configured', closeMarker },
    });
    // Arguments are checked against the schema the worker reported, before anything crosses.
    expect((await invoke(host, 'iso_echo', { text: 5 })).body.errors[0]!.code).toBe('INVALID_ARGUMENTS');

    const listed = (await (await fetch(`${host.url}/v1/tools`)).json()) as { tools: Array<{ name: string }> };
    expect(listed.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['iso_echo', 'iso_busy_loop', 'iso_configured']),
    );

    const cli = await runCli(['--config', config, 'tools', 'call', 'iso_echo', '{"text":"from the CLI"}']);
    expect(cli.json<{ result: { echo: string } }>().result.echo).toBe('from the CLI');

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--config', config, 'mcp'],
      cwd: HOST_ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn' } as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(['iso_echo', 'iso_configured']),
      );
      const called = await client.callTool({ name: 'iso_echo', arguments: { text: 'over MCP' } });
      expect(JSON.stringify(called.content)).toContain('over MCP');
    } finally {
      await client.close();
    }
  }, 60_000);

  it('cuts off a busy loop at its time-out and replaces the worker, while /healthz and other calls keep answering', async () => {
    await everyWorkerReplaced(host);
    const busy = invoke(host, 'iso_busy_loop');
    const during = await Promise.all([healthy(host), invoke(host, 'iso_echo', { text: 'meanwhile' }), healthy(host)]);
    expect(during[0]).toBe(true);
    expect(during[1].body.result.echo).toBe('meanwhile');
    expect(during[2]).toBe(true);
    const { body } = await busy;
    expect(body.errors[0]!.code).toBe('TIMEOUT');
    await logLine(
      host,
      (entry) => typeof entry.msg === 'string' && entry.msg.includes('replacing a worker that stayed busy'),
    );
    for (let i = 0; i < 4; i++)
      expect((await invoke(host, 'iso_echo', { text: `after ${i}` })).body.result.echo).toBe(`after ${i}`);
  });

  it('stops a tool that allocates without bound with RESOURCE_LIMIT (or TIMEOUT), and the host stays up', async () => {
    await everyWorkerReplaced(host);
    const hog = invoke(host, 'iso_allocate');
    expect((await invoke(host, 'iso_echo', { text: 'meanwhile' })).body.result.echo).toBe('meanwhile');
    const { body } = await hog;
    expect(['RESOURCE_LIMIT', 'TIMEOUT']).toContain(body.errors[0]!.code);
    expect(body.errors[0]!.message).not.toMatch(STACK);
    expect(await healthy(host)).toBe(true);
    expect((await invoke(host, 'iso_echo', { text: 'after' })).body.result.echo).toBe('after');
  });

  // process.exit in a worker is refused now, like in process (exit-refused.test.ts): a throw in a timer still ends it.
  it.each(['timer'])(
    'survives a worker that crashes (%s), and a call in flight on another worker still succeeds',
    async (how) => {
      await everyWorkerReplaced(host);
      // Each call goes to the least busy worker: with both workers ready, the two land on different ones.
      const slow = invoke(host, 'iso_slow');
      const crashed = await invoke(host, 'iso_crash', { how });
      expect(crashed.body.errors[0]!.code).toBe('TOOL_EXCEPTION');
      expect(crashed.body.errors[0]!.message).toContain('its worker stopped');
      expect((await slow).body.result).toEqual({ slow: true });
      expect(await healthy(host)).toBe(true);
      expect((await invoke(host, 'iso_echo', { text: 'after' })).body.result.echo).toBe('after');
    },
  );

  it("runs the package's close export in its workers when the host stops", async () => {
    await everyWorkerReplaced(host);
    expect(await host.stop()).toBe(0);
    expect(readFileSync(closeMarker, 'utf8')).toMatch(/^closed in thread \d+$/m);
  });
});
