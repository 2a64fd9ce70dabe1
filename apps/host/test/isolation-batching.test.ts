/**
 * Calls to an isolated package that start in the same turn of the event loop cross to its worker as one
 * message (src/isolation/outbox.ts). What callers rely on must hold whatever shares a batch: each call
 * gets its own answer and its own progress, a cancellation or a time-out sent right behind its call
 * reaches it, and a call that loops forever cannot hold back the answers of the calls before it. A real host, composed from a real config
 * file in a process of its own (test/fixtures/batching-probe.mjs), runs the fixture package
 * (test/fixtures/broken/isolated) in one worker thread, so every batch goes to the same worker.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_ROOT, scratch } from './support.js';

const FIXTURES = join(HOST_ROOT, 'test', 'fixtures');
type Answer = { ok?: any; code?: string };

const space = scratch();
let probe: {
  texts: string[];
  echoes: Answer[];
  mixed: Answer[];
  cancelled: Answer;
  around: Answer[];
  timedOut: Answer[];
  progress: Array<{ answer: Answer; heard: Array<{ progress: number; total?: number }> }>;
  beforeLoop: Answer[];
  afterLoop: Answer;
};
beforeAll(async () => {
  const file = join(space.dir, 'aptix.config.json');
  writeFileSync(
    file,
    JSON.stringify({
      db: space.db,
      toolPackages: [
        '@aptix/tool-samples',
        '@aptix/tool-mode-catalog',
        '@aptix/tool-mode-change',
        { package: join(FIXTURES, 'broken', 'isolated'), isolation: 'worker', workers: 1 },
      ],
    }),
  );
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(FIXTURES, 'batching-probe.mjs'), file, space.dir],
    { cwd: HOST_ROOT, maxBuffer: 64 * 1024 * 1024 },
  );
  probe = JSON.parse(stdout);
}, 120_000);
afterAll(() => space.cleanup());

describe('calls batched across the thread boundary', () => {
  it('gives each of 300 calls started at once its own answer, all from the one worker', () => {
    expect(probe.echoes.map((answer) => answer.ok?.echo)).toEqual(probe.texts);
    expect(new Set(probe.echoes.map((answer) => answer.ok?.threadId)).size).toBe(1);
  });

  it('mixes successes, refusals and a result with content blocks in one batch, each answered as alone', () => {
    expect(probe.mixed[0]!.ok.echo).toBe('fine');
    expect(probe.mixed[1]).toEqual({ code: 'INVALID_ARGUMENTS' });
    expect(probe.mixed[2]).toEqual({ code: 'TOOL_NOT_FOUND' });
    expect(probe.mixed[3]).toEqual({ ok: { pixels: 1 } });
  });

  it('delivers a cancellation sent in the same turn as its call to the tool, after the call, and leaves the calls around it alone', () => {
    // The cancel crossed behind its call, not ahead of it (then the worker would never have heard of it and
    // the call would end OUTCOME_UNKNOWN after the grace period): either the tool saw its signal abort, or,
    // still waiting its turn in the batch, the call was never started and answers cancelled.
    const { ok } = probe.cancelled;
    expect(
      ok.aborted === 'AbortError' || (ok.wasCancelled === true && ok.elapsedMs === 0),
      JSON.stringify(probe.cancelled),
    ).toBe(true);
    const expected = [
      ...Array.from({ length: 20 }, (_, i) => `before ${i}`),
      ...Array.from({ length: 20 }, (_, i) => `after ${i}`),
    ];
    expect(probe.around.map((answer) => answer.ok?.echo)).toEqual(expected);
  });

  it('delivers the time-outs of calls started together to each tool', () => {
    expect(probe.timedOut).toEqual(Array.from({ length: 10 }, () => ({ ok: { aborted: 'TimeoutError' } })));
  });

  it("routes each call's progress to its own caller when the reports of several calls come back together", () => {
    probe.progress.forEach(({ answer, heard }, i) => {
      expect(answer.ok.steps).toBe(i + 1);
      expect(heard.map((report) => report.progress)).toEqual(Array.from({ length: i + 2 }, (_, step) => step));
      expect(heard.every((report) => report.total === i + 1)).toBe(true);
    });
  });

  it('answers the calls of a batch that come before one that loops forever; the one behind it fails with the worker, which is replaced', () => {
    expect(probe.beforeLoop[0]).toMatchObject({ ok: { echo: 'answered before the loop' } });
    expect(probe.beforeLoop[1]).toEqual({ code: 'TIMEOUT' });
    // Queued behind the loop in the same worker, it could not start: it ends with the worker, as it would have unbatched.
    expect(probe.beforeLoop[2]).toEqual({ code: 'TOOL_UNAVAILABLE' });
    expect(probe.afterLoop).toMatchObject({ ok: { echo: 'after the loop' } });
  });
});
