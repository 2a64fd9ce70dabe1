/**
 * Issue 33, 1: code of a tool package cannot end the host. process.exit, process.reallyExit,
 * process.abort and process.kill of the host's own process, from a tool's call, its constructor, a
 * timer, the package's import or its createTools, are refused: the call fails with
 * PROCESS_EXIT_REFUSED, a log line names the package, the other tools keep answering, and the host's own
 * shutdown still works. In process and in worker threads alike, in a real `aptix serve`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthy, invoke, jsonLines, runToEnd, STACK, writeConfig } from './hostile.js';
import { logLine, scratch, startHost, type RunningHost } from './support.js';

const space = scratch();
afterAll(() => space.cleanup());

const WAYS = [
  'exit',
  'exitNoCode',
  'reallyExit',
  'abort',
  'kill',
  'kill9',
  'killGroup',
  'rawKill',
  'namedExit',
  'namedKill',
  'hidden',
];

/** A log line about a refused exit that names @broken/exiting (in a worker, through the worker's log entries). */
const refusedLine = (call: string) => (entry: Record<string, unknown>) =>
  entry.event === 'exitRefused' &&
  entry.call === call &&
  typeof entry.msg === 'string' &&
  entry.msg.includes('package "@broken/exiting"');

describe.each(['none', 'worker'])('isolation: "%s"', (isolation) => {
  let host: RunningHost;
  beforeAll(async () => {
    const config = writeConfig(space.dir, `exiting-${isolation}`, [
      { package: 'exiting', isolation, workers: 1 },
      { package: 'exit-import', isolation, optional: true },
    ]);
    host = await startHost({ args: ['--config', config] });
  }, 60_000);
  afterAll(async () => {
    await host?.stop();
  });

  /** The host is up and every other tool answers. */
  async function stillServing(): Promise<void> {
    expect(host.child.exitCode).toBeNull();
    expect(await healthy(host)).toBe(true);
    expect((await invoke(host, 'exiting_fine')).body.result.fine).toBe(true);
    expect((await invoke(host, 'testing_calculator', { operation: 'add', a: 2, b: 3 })).body.result.value).toBe(5);
  }

  it.each(WAYS)(
    'refuses %s from a call: PROCESS_EXIT_REFUSED, a log line naming the package, and the host serves on',
    async (how) => {
      const { body, text } = await invoke(host, 'exiting_now', { how });
      expect(body.successful).toBe(false);
      expect(body.errors[0]!.code).toBe('PROCESS_EXIT_REFUSED');
      expect(body.errors[0]!.message).toMatch(
        /^exiting_now failed: it called process\.(exit|reallyExit|abort|kill|_kill)\(.*\), which would end the host process, and the host refused it\./,
      );
      expect(text).not.toMatch(STACK);
      const line = await logLine(
        host,
        (entry) =>
          entry.event === 'exitRefused' &&
          typeof entry.call === 'string' &&
          entry.msg !== undefined &&
          String(entry.msg).includes('package "@broken/exiting"') &&
          body.errors[0]!.message.includes(`called ${entry.call},`),
      );
      expect(line.level).toBe(50);
      await stillServing();
    },
  );

  it("refuses an exit from a tool's constructor with the same code", async () => {
    expect((await invoke(host, 'exiting_arm')).body.result.armed).toBe(true);
    expect((await invoke(host, 'exiting_in_constructor')).body.errors[0]!.code).toBe('PROCESS_EXIT_REFUSED');
    await logLine(host, refusedLine('process.exit(7)'));
    await stillServing();
  });

  it('refuses an exit the tool catches: its call carries on, and the exit still never happens', async () => {
    expect((await invoke(host, 'exiting_swallowed')).body.result).toEqual({ carriedOn: true });
    await logLine(host, refusedLine('process.exit(1)'));
    await stillServing();
  });

  it.each(['own', 'bare'])('refuses an exit from a timer after the call answered (%s callback)', async (how) => {
    const before = host.logs.filter((entry) => entry.call === 'process.exit(6)').length;
    expect((await invoke(host, 'exiting_later', { how })).body.result).toEqual({ scheduled: how });
    const line = await logLine(
      host,
      (entry) =>
        entry.call === 'process.exit(6)' &&
        host.logs.filter((e) => e.call === 'process.exit(6)').indexOf(entry) >= before,
    );
    // A bare callback (setTimeout(process.exit)) carries no frame of its package: in process the log says
    // so; in a worker the package is known anyway, since the worker runs only it.
    if (how === 'own' || isolation === 'worker') expect(line.msg).toContain('package "@broken/exiting"');
    else expect(line.msg).toContain('code the host cannot attribute');
    await stillServing();
  });

  it('refuses an exit in an import: an optional package is skipped, naming it, and the host serves on', async () => {
    const skipped = await logLine(
      host,
      (entry) =>
        String(entry.msg).startsWith('optional tool package skipped') &&
        String(entry.msg).includes('@broken/exit-import'),
    );
    expect(skipped.msg).toContain('process.exit(9)');
    expect(
      jsonLines(host.output()).some(
        (entry) =>
          entry.event === 'exitRefused' &&
          String(entry.msg).startsWith('refused process.exit(9) from package "@broken/exit-import"'),
      ),
    ).toBe(true);
    await stillServing();
  });

  it("stops on the host's own shutdown, with exit code 0, after all of that", async () => {
    expect(await host.stop()).toBe(0);
  });
});

describe.each(['none', 'worker'])('an exit in createTools, isolation: "%s"', (isolation) => {
  it.each([['check'], ['serve', '--port', '0']])(
    "fails aptix %s with a message naming the package, instead of ending it with the package's code",
    async (...args) => {
      const config = writeConfig(space.dir, `exit-create-${isolation}-${args[0]}`, [
        { package: 'exit-import', isolation },
      ]);
      const run = await runToEnd(config, args, { env: { APTIX_FIXTURE_EXIT_WHEN: 'createTools' } });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /Tool package \\?"@broken\/exit-import\\?" \(.*\): createTools\(\) threw ToolRefusal: it called process\.exit\(10\)/,
      );
      expect(
        jsonLines(run.stdout + run.stderr).some(
          (entry) =>
            entry.event === 'exitRefused' &&
            String(entry.msg).startsWith('refused process.exit(10) from package "@broken/exit-import"'),
        ),
      ).toBe(true);
    },
  );
});
