import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBinary } from '../runtimes/index.mjs';
import { WORKSPACE } from './support.js';

const CONFIG = 'e2e/conformance/aptix.config.json';

/** `aptix serve --config e2e/conformance/aptix.config.json` from the repository root, on a free port. */
function serveConformanceHost(): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(WORKSPACE, 'apps/host/bin/aptix.js'), 'serve', '--config', CONFIG, '--port', '0'],
      {
        cwd: WORKSPACE,
        env: { ...process.env, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`aptix serve exited with ${code}:\n${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { url?: string; msg?: string };
        if (entry.url && entry.msg?.startsWith('Aptix listening')) resolve({ url: entry.url, child });
      } catch {
        // not a log line
      }
    });
  });
}

/** Runs one release of the suite on Node 22 (it needs `fs.globSync`) against /mcp; no scenario may fail (no expected-failures file). */
function runSuite(packageAlias: string, url: string, extra: readonly string[] = []) {
  const cli = join(WORKSPACE, 'node_modules', packageAlias, 'dist', 'index.js');
  const result = spawnSync(nodeBinary(22), [cli, 'server', '--url', `${url}/mcp`, ...extra], {
    cwd: WORKSPACE,
    encoding: 'utf8',
    timeout: 540_000,
  });
  const output = `${result.stdout}\n${result.stderr}`;
  const summary = output.slice(output.lastIndexOf('=== SUMMARY ==='));
  return { status: result.status, summary };
}

describe('the MCP conformance suite against /mcp (fixtures in e2e/conformance)', () => {
  let host: { url: string; child: ChildProcess };
  beforeAll(async () => {
    host = await serveConformanceHost();
  });
  afterAll(() => {
    host?.child.removeAllListeners('exit');
    host?.child.kill('SIGTERM');
  });

  it('passes every scenario of the 0.1.16 release, pending ones included, with no expected failures (2025 revisions)', () => {
    const { status, summary } = runSuite('conformance-stable', host.url, ['--suite', 'all']);
    expect(status, summary).toBe(0);
    expect(summary).toMatch(/Total: \d+ passed, 0 failed/);
  });

  it('passes every scenario and check of the 0.2.0-alpha.12 pre-release with no expected failures, the 2026-07-28 draft scenarios included', () => {
    const { status, summary } = runSuite('conformance-next', host.url, ['--suite', 'all']);
    expect(status, summary).toBe(0);
    expect(summary).toMatch(/Total: \d+ passed, 0 failed/);
  });
});
