/**
 * Issue 33, 3 and 4: an isolated worker that a package broke is replaced, and the next calls answer
 * clean. A package that changes JavaScript's built-ins (an enumerable Object.prototype property, a
 * replaced Array.prototype.push or JSON.stringify, from a call or from a timer after it) and one that
 * holds Buffers outside the V8 heap, past resourceLimits.maxExternalMemoryMb. Real `aptix serve`
 * processes; waits are bounded only so that a broken host fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyWorkerReplaced, healthy, invoke, STACK, writeConfig } from './hostile.js';
import { logLine, scratch, startHost, type RunningHost } from './support.js';

const space = scratch();
afterAll(() => space.cleanup());

/** The lines saying a worker of `pkg` is being replaced for `why`, so far. */
const replacements = (host: RunningHost, why: string) =>
  host.logs.filter(
    (entry) =>
      typeof entry.msg === 'string' && entry.msg.includes('replacing a worker that') && entry.msg.includes(why),
  );

describe('a package that changes the built-ins of its worker (isolation: "worker")', () => {
  let host: RunningHost;
  beforeAll(async () => {
    host = await startHost({
      args: [
        '--config',
        writeConfig(space.dir, 'polluting', [{ package: 'polluting', isolation: 'worker', workers: 2 }]),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await host?.stop();
  });

  /** Several calls in a row, each answered by a worker whose built-ins are intact. */
  async function answersClean(): Promise<void> {
    for (let i = 0; i < 6; i++) {
      const { body } = await invoke(host, 'polluting_echo', { text: `clean ${i}` });
      expect(body).toMatchObject({
        successful: true,
        result: { echo: `clean ${i}`, trimmed: 'clean', json: '{"a":1}' },
      });
    }
    expect((await invoke(host, 'testing_calculator', { operation: 'add', a: 2, b: 3 })).body.result.value).toBe(5);
  }

  it.each([
    ['objectPrototype', 'Object.prototype gained the enumerable property "polluted"'],
    ['arrayPush', 'Array.prototype.push was replaced'],
    ['jsonStringify', 'JSON.stringify was replaced'],
  ])(
    '%s from a call: the call fails, the worker is replaced with a line naming the package and what changed, the next calls answer clean',
    async (how, what) => {
      await everyWorkerReplaced(host);
      const before = replacements(host, what).length;
      const { body, text } = await invoke(host, 'polluting_now', { how });
      expect(body.successful).toBe(false);
      expect(body.errors[0]).toEqual({
        code: 'TOOL_EXCEPTION',
        message: `polluting_now changed JavaScript's built-ins in its isolated worker (${what}), so its result was dropped and the worker replaced. A tool must leave the built-ins alone.`,
      });
      expect(text).not.toMatch(STACK);
      const line = await logLine(host, (entry) => replacements(host, what).indexOf(entry) >= before);
      expect(line.toolPackage).toContain('polluting');
      expect(line.reason).toBe('unfit');
      await everyWorkerReplaced(host);
      await answersClean();
    },
  );

  it('a port whose postMessage a call replaced keeps answering: the worker sends through the one it bound before the package loaded', async () => {
    await everyWorkerReplaced(host);
    expect((await invoke(host, 'polluting_now', { how: 'portPostMessage' })).body.result.polluted).toBe(
      'portPostMessage',
    );
    await answersClean();
  });

  it('a replaced MessagePort.prototype.postMessage is found, the worker replaced, and the next calls answer clean', async () => {
    await everyWorkerReplaced(host);
    const what = 'MessagePort.prototype["postMessage"] was replaced or redefined';
    const before = replacements(host, what).length;
    const { body } = await invoke(host, 'polluting_now', { how: 'prototypePostMessage' });
    // Found at the call's end when the full comparison is due, else between calls: either way, the worker goes.
    if (!body.successful) expect(body.errors[0]!.message).toContain(what);
    await logLine(host, (entry) => replacements(host, what).indexOf(entry) >= before);
    await everyWorkerReplaced(host);
    await answersClean();
  });

  it('from a timer, right before the next calls: each answers clean, from that worker before the change or another after it', async () => {
    await everyWorkerReplaced(host);
    const what = 'Object.prototype gained the enumerable property "polluted"';
    const before = replacements(host, what).length;
    expect((await invoke(host, 'polluting_later', { how: 'objectPrototype' })).body.result.scheduled).toBe(
      'objectPrototype',
    );
    // Calls one at a time go to the first idle worker, the one the timer changes: a call that reaches it
    // after the change is refused there unstarted and runs on another worker.
    for (let i = 0; i < 4; i++)
      expect((await invoke(host, 'polluting_echo', { text: `next ${i}` })).body).toMatchObject({
        successful: true,
        result: { echo: `next ${i}`, trimmed: 'clean' },
        errors: [],
      });
    await logLine(host, (entry) => replacements(host, what).indexOf(entry) >= before);
    await everyWorkerReplaced(host);
    await answersClean();
  });

  it('from a timer after the call answered: found between calls, the worker replaced, the next calls answer clean', async () => {
    await everyWorkerReplaced(host);
    const what = 'String.prototype["trim"] was replaced or redefined';
    const before = replacements(host, what).length;
    expect((await invoke(host, 'polluting_later', { how: 'stringTrim' })).body.result.scheduled).toBe('stringTrim');
    await logLine(host, (entry) => replacements(host, what).indexOf(entry) >= before);
    await everyWorkerReplaced(host);
    await answersClean();
    expect(await healthy(host)).toBe(true);
  });
});

describe('a package that holds memory outside the V8 heap (isolation: "worker", maxExternalMemoryMb: 64)', () => {
  let host: RunningHost;
  beforeAll(async () => {
    host = await startHost({
      args: [
        '--config',
        writeConfig(space.dir, 'hoarding', [
          { package: 'hoarding', isolation: 'worker', workers: 2, resourceLimits: { maxExternalMemoryMb: 64 } },
        ]),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await host?.stop();
  });

  it('lets a call use more for a moment and drop it: nothing is replaced', async () => {
    for (let i = 0; i < 3; i++)
      // errors: [] so that a failure shows them (the reason a worker judged itself over).
      expect((await invoke(host, 'hoarding_passing', { mb: 128 })).body).toMatchObject({
        successful: true,
        result: { sum: 4 },
        errors: [],
      });
    expect(replacements(host, 'outside the heap')).toEqual([]);
  });

  it('fails a call that keeps 100 MiB of Buffers with RESOURCE_LIMIT, replaces the worker, and the other tools keep answering', async () => {
    const { body, text } = await invoke(host, 'hoarding_keep', { mb: 100 });
    expect(body.successful).toBe(false);
    expect(body.errors[0]!.code).toBe('RESOURCE_LIMIT');
    expect(body.errors[0]!.message).toContain(
      'more memory outside the JavaScript heap (Buffers, ArrayBuffers) than its limit of 64 MiB',
    );
    expect(body.errors[0]!.message).toContain('resourceLimits.maxExternalMemoryMb');
    expect(text).not.toMatch(STACK);
    const line = await logLine(
      host,
      (entry) =>
        replacements(host, 'went over its limit outside the heap').length > 0 &&
        entry === replacements(host, 'went over its limit outside the heap')[0],
    );
    expect(line.toolPackage).toContain('hoarding');
    expect(String(line.msg)).toMatch(
      /it held \d+ MiB outside the JavaScript heap \(\d+ MiB of it in Buffers and ArrayBuffers\), over its limit of 64 MiB/,
    );
    await everyWorkerReplaced(host);
    for (let i = 0; i < 3; i++) expect((await invoke(host, 'hoarding_fine')).body.result.fine).toBe(true);
    expect(await healthy(host)).toBe(true);
  });

  it('finds what a timer keeps adding after the call answered, between calls, and replaces that worker', async () => {
    await everyWorkerReplaced(host);
    const before = replacements(host, 'went over its limit outside the heap').length;
    expect((await invoke(host, 'hoarding_later', { mb: 160 })).body.result.scheduled).toBe(160);
    await logLine(host, (entry) => replacements(host, 'went over its limit outside the heap').indexOf(entry) >= before);
    await everyWorkerReplaced(host);
    expect((await invoke(host, 'hoarding_fine')).body.result.fine).toBe(true);
  });
});
