/**
 * A real Prometheus (Debian's package, as .ci/run installs it) scrapes a running host's /metrics with
 * an admin's API key, and a PromQL query over its HTTP API reads the tool-call histogram back
 * (issue 34). The Prometheus port of its own (`telemetry.prometheus: { port }`) answers without a key.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, scratch, startHostWithConfig, type RunningHost } from './support.js';

const ADMIN = 'admin-key-0123456789';
const PROMETHEUS = spawnSync('which', ['prometheus'], { encoding: 'utf8' }).stdout.trim();
if (PROMETHEUS === '')
  process.stderr.write(
    '\n!!! prometheus not found (apt-get install -y prometheus): the Prometheus scrape test is SKIPPED. !!!\n',
  );

async function invoke(url: string, args: Record<string, unknown>): Promise<void> {
  const answer = await fetch(`${url}/v1/tools/testing_ping_pong/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ arguments: args }),
  });
  expect(answer.status).toBe(200);
}

interface PromResult {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

/** Runs an instant PromQL query until `done` accepts its result (Prometheus scrapes every second). */
async function query(
  base: string,
  promql: string,
  done: (result: PromResult[]) => boolean,
  timeoutMs = 30_000,
): Promise<PromResult[]> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const answer = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await answer.json()) as { status: string; data?: { result: PromResult[] } };
      last = body;
      if (body.status === 'success' && done(body.data!.result)) return body.data!.result;
    } catch (error) {
      last = error; // Prometheus still starting
    }
    if (Date.now() > deadline)
      throw new Error(`PromQL ${promql} never gave the expected result; last: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.skipIf(PROMETHEUS === '')('Prometheus scraping a host', () => {
  let host: RunningHost;
  let prometheus: ChildProcess | undefined;
  let promUrl = '';
  const spaces: Array<{ cleanup(): void }> = [];
  beforeAll(async () => {
    const started = await startHostWithConfig(
      { telemetry: { enabled: true, traces: false, metrics: false, prometheus: true } },
      { APTIX_API_KEYS: `ops=${ADMIN}` },
    );
    host = started.host;
    spaces.push(started.space);
    const space = scratch();
    spaces.push(space);
    const config = join(space.dir, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: aptix',
        '    scrape_interval: 1s',
        '    metrics_path: /metrics',
        '    authorization:',
        '      type: Bearer',
        `      credentials: ${ADMIN}`,
        '    static_configs:',
        `      - targets: ['${new URL(host.url).host}']`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(space.dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
  });
  afterAll(async () => {
    if (prometheus !== undefined && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await host?.stop();
    for (const space of spaces) space.cleanup();
  });

  it('reads the tool-call histogram back through PromQL, by tool and outcome', async () => {
    for (let i = 0; i < 5; i++) await invoke(host.url, { message: 'hello', count: 1 });
    await invoke(host.url, { message: '' });
    // The scrape with the admin's key succeeds (up is 1 only for a target that answered 200).
    await query(promUrl, 'up{job="aptix"}', (result) => result[0]?.value[1] === '1');
    const calls = await query(
      promUrl,
      'sum by (error_type) (aptix_tool_call_duration_count{gen_ai_tool_name="testing_ping_pong"})',
      (result) => result.length === 2,
    );
    const byOutcome = Object.fromEntries(calls.map((row) => [row.metric.error_type ?? 'ok', Number(row.value[1])]));
    expect(byOutcome).toEqual({ ok: 5, INVALID_ARGUMENTS: 1 });
    const [p99] = await query(
      promUrl,
      'histogram_quantile(0.99, sum by (le) (aptix_tool_call_duration_bucket{gen_ai_tool_name="testing_ping_pong"}))',
      (result) => result.length === 1,
    );
    const seconds = Number(p99!.value[1]);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(60);
  });
});

describe('metrics on a port of their own', () => {
  it('serves the Prometheus text there without a key, and not at /metrics on the host', async () => {
    const port = await freePort();
    const { host, space } = await startHostWithConfig(
      { telemetry: { enabled: true, traces: false, metrics: false, prometheus: { port } } },
      { APTIX_API_KEYS: `ops=${ADMIN}` },
    );
    try {
      await invoke(host.url, { message: 'hello', count: 1 });
      const own = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(own.status).toBe(200);
      expect(await own.text()).toMatch(/^aptix_tool_call_duration_count\{[^}]*\} 1$/m);
      const onHost = await fetch(`${host.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(onHost.status).toBe(404);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});
