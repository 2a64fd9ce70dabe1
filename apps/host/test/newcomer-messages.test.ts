import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, respond, ScriptedResponsesServer } from '@aptix/reasoner/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, HOST_ROOT, runCli, scratch } from './support.js';
import { writeBrokenToolPackage } from './suites.js';

describe('messages a newcomer can act on, from the aptix CLI as a child process', () => {
  const space = scratch();
  const env = { APTIX_DB: space.db };
  afterAll(() => space.cleanup());

  it('bad JSON in the arguments of tools call is a usage error: exit 2, with a message that shows the fix', async () => {
    const run = await runCli(['tools', 'call', 'testing_calculator', "{operation:'add'}"], { env });
    expect(run.code).toBe(2);
    const { error } = run.json<{ error: { code: string; message: string } }>();
    expect(error.code).toBe('USAGE');
    expect(error.message).toMatch(/^The arguments "\{operation:'add'\}" are not valid JSON \(.+\)\. Fix: pass one JSON object in single quotes, e\.g\. aptix tools call testing_calculator '\{"operation":"add","a":1,"b":2\}'\.$/);
  });

  it('JSON the schema refuses is still the tool\'s failure (exit 1), not a usage error', async () => {
    const run = await runCli(['tools', 'call', 'testing_calculator', '{"operation":"add"}'], { env });
    expect(run.code).toBe(1);
    expect(run.json<{ successful: boolean }>().successful).toBe(false);
  });

  it('prints a start-up contract error once: no log line repeating the aptix: line', async () => {
    const dir = writeBrokenToolPackage(space.dir);
    const run = await runCli(['check'], { env: { ...env, LOG_LEVEL: 'info', APTIX_TOOL_PACKAGES: `${dir},@aptix/tool-samples,@aptix/tool-mode-catalog,@aptix/tool-mode-change` } });
    expect(run.code).toBe(1);
    expect(run.stderr.match(/TOOL_NAME_INVALID/g)).toHaveLength(1);
    expect(run.stderr).toMatch(/^aptix: Tool package "broken-tools" has a tool that breaks the contract \(TOOL_NAME_INVALID\)/);
  });
});

describe('aptix chat keeps the lines typed during a turn', () => {
  it('answers lines pasted at once in order, and a pasted /exit still leaves', async () => {
    const space = scratch();
    const model = await ScriptedResponsesServer.start();
    try {
      const env = { APTIX_DB: space.db, OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test-key', APTIX_MODEL: 'scripted-model', LOG_LEVEL: 'warn' };
      model.script(respond(undefined, call('call_1', 'testing_calculator', { operation: 'multiply', a: 6, b: 7 })), respond('6 × 7 = 42.'), respond('You are welcome.'));
      const child = spawn(process.execPath, [BIN, 'chat'], { cwd: HOST_ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      // Pasted in one go: the second line and /exit arrive while the first turn runs. stdin stays open,
      // so only /exit can end the chat.
      child.stdin.write('What is 6 times 7?\nThanks!\n/exit\n');
      expect(await exited, stderr).toBe(0);
      expect(stdout).toContain('6 × 7 = 42.');
      expect(stdout).toContain('You are welcome.');
      expect(stdout.indexOf('6 × 7 = 42.')).toBeLessThan(stdout.indexOf('You are welcome.'));
      expect(JSON.stringify(model.requests.at(-1)!.body.input)).toContain('Thanks!');
      child.stdin.end();
    } finally {
      await model.close();
      space.cleanup();
    }
  });
});
