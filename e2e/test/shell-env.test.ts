/**
 * `npm test` does not depend on the shell it runs in (issue 36): a developer who runs a host sets
 * APTIX_DB, APTIX_API_KEY or OPENAI_BASE_URL in their shell, and the hosts the tests start must not
 * read them. Runs two of the host's suites that start hosts and open session stores, with such
 * variables set, through vitest as `npm test` does.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { WORKSPACE } from './support.js';

it('the host suites pass with APTIX_* and OPENAI_* set in the environment they were started from', async () => {
  const env = {
    ...process.env,
    APTIX_DB: 'sqlite:/nonexistent-folder-of-a-user/aptix.db',
    APTIX_API_KEY: 'a-key-the-tests-never-send-0123456789',
    APTIX_PORT: '1',
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    OPENAI_API_KEY: 'sk-not-for-tests',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
  };
  const run = await promisify(execFile)(
    process.execPath,
    [
      join(WORKSPACE, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      'test/approvals-turn.test.ts',
      'test/sessions.test.ts',
    ],
    {
      cwd: join(WORKSPACE, 'apps', 'host'),
      env,
      timeout: 240_000,
    },
  ).catch((error: { stdout?: string; stderr?: string; code?: number }) => ({
    stdout: error.stdout ?? '',
    stderr: `${error.stderr ?? ''} (exit ${error.code})`,
  }));
  expect(run.stdout, run.stderr).toMatch(/Test Files +2 passed \(2\)/);
}, 300_000);
