/**
 * The worker-restart counter (issue 34): an isolated tool package whose worker crashes is counted in
 * aptix.worker.restarts, read here from the host's Prometheus port of its own.
 */
import { describe, expect, it } from 'vitest';
import { everyWorkerReplaced, invoke, writeConfig } from './hostile.js';
import { freePort, scratch, startHost } from './support.js';

describe('a worker that crashes, with metrics on', () => {
  it('is counted in aptix_worker_restarts by package and reason', async () => {
    const space = scratch();
    const port = await freePort();
    const config = writeConfig(
      space.dir,
      'telemetry-workers',
      [{ package: 'isolated', isolation: 'worker', workers: 1 }],
      {
        telemetry: { enabled: true, traces: false, metrics: false, prometheus: { port } },
      },
    );
    const host = await startHost({ args: ['--config', config] });
    try {
      const crashed = await invoke(host, 'iso_crash', { how: 'timer' });
      expect(crashed.body.errors[0]!.code).toBe('TOOL_EXCEPTION');
      await everyWorkerReplaced(host);
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toMatch(/^aptix_worker_restarts_total\{[^}]*aptix_worker_reason="crash"[^}]*\} 1$/m);
      expect(text).toMatch(/aptix_tool_package="[^"]*isolated"/);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});
