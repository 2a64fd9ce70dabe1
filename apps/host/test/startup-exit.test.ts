/**
 * Issue 33, 2: a package whose import hangs, keeps a timer alive and swallows SIGTERM and SIGINT must
 * not leave a zombie. After the start-up failure, `aptix serve`, `aptix check` and `aptix mcp` exit
 * with code 1 by themselves; a signal at any moment of start-up ends them at once with 128 + its
 * number; an import stuck in synchronous code is killed by the start-up watchdog. Real processes; the
 * only wait is the guard that kills a hung one (which then fails the test).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runToEnd, writeConfig } from './hostile.js';
import { scratch } from './support.js';

const space = scratch();
afterAll(() => space.cleanup());

const COMMANDS: ReadonlyArray<readonly string[]> = [['serve', '--port', '0'], ['check'], ['mcp']];

describe.each(['none', 'worker'])(
  'isolation: "%s", an import that hangs with a timer and swallows signals',
  (isolation) => {
    it.each(COMMANDS)('aptix %s exits with code 1 after start-up fails, naming the package', async (...command) => {
      const config = writeConfig(space.dir, `hang-${isolation}-${command[0]}`, [
        { package: 'hanging-timer', isolation, startupTimeoutMs: 400 },
      ]);
      const run = await runToEnd(config, command);
      expect(run.signal).toBeNull();
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /Tool package \\?"@broken\/hanging-timer\\?" \(.*\) did not finish importing within 400 ms/,
      );
    });

    it.each([...COMMANDS.map((command) => ['SIGTERM', ...command]), ['SIGINT', 'serve', '--port', '0']])(
      '%s while the import hangs ends aptix %s at once',
      async (signal, ...command) => {
        // A limit far past the guard's: only the signal can end this start-up in time.
        const config = writeConfig(space.dir, `signal-${isolation}-${command[0]}-${signal}`, [
          { package: 'hanging-timer', isolation, startupTimeoutMs: 600_000 },
        ]);
        let sent = false;
        const run = await runToEnd(config, command, {
          onStderr: (text, child) => {
            if (sent || !text.includes('hanging-timer: import started')) return;
            sent = true;
            child.kill(signal as NodeJS.Signals);
          },
        });
        expect(sent).toBe(true);
        expect(run.signal).toBeNull();
        expect(run.code).toBe(signal === 'SIGTERM' ? 143 : 130);
        expect(run.stderr).toContain(`aptix: ${signal} received while starting: exiting now.`);
      },
    );
  },
);

describe('an import stuck in synchronous code, in process', () => {
  it.each(COMMANDS)(
    'aptix %s is killed by its start-up watchdog, saying why, even after a SIGTERM it cannot hear',
    async (...command) => {
      const config = writeConfig(space.dir, `busy-${command[0]}`, [{ package: 'busy-import', startupTimeoutMs: 400 }]);
      let sent = false;
      const run = await runToEnd(config, command, {
        onStderr: (text, child) => {
          if (sent || !text.includes('busy-import: import started')) return;
          sent = true;
          child.kill('SIGTERM');
        },
      });
      expect(sent).toBe(true);
      expect(run.stderr).toMatch(
        /aptix: start-up has been stuck in synchronous code for \d+ ms \(a tool package's import or setup that never returns/,
      );
      expect(run.signal).toBe('SIGKILL');
    },
  );
});
