import { createHook } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { testContext } from '@aptix/tool-contract/testing';
import { errorOf, expectGenericFailureOnException, harness, payloadOf, VIAS } from '../test/harness.js';
import { DelayTool } from './delay.tool.js';

const LONG_MS = 5_000;

/** Runs `call` and tells how long it took. */
async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await call();
  return { value, ms: performance.now() - started };
}

describe.each(VIAS)('testing_delay, called %s', (via) => {
  it('waits the requested time and says it was not cancelled', async () => {
    const h = harness(DelayTool);
    const { value, ms } = await timed(() =>
      h.call(via, '{"milliseconds":20}', { context: testContext({ sessionId: 's-3', conversationId: 'c-3' }) }),
    );
    const payload = payloadOf(value);
    expect(payload).toEqual({
      wasCancelled: false,
      elapsedMs: expect.any(Number),
      requestedMs: 20,
      sessionId: 's-3',
      conversationId: 'c-3',
    });
    expect(payload.elapsedMs).toBeGreaterThanOrEqual(19);
    expect(ms).toBeGreaterThanOrEqual(19);
  });

  it('accepts 0 milliseconds', async () => {
    expect(payloadOf(await harness(DelayTool).call(via, '{"milliseconds":0}'))).toMatchObject({
      wasCancelled: false,
      requestedMs: 0,
    });
  });

  it('stops early when the caller cancels, and returns a successful result describing it (AGN-005 §8)', async () => {
    const h = harness(DelayTool);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 15);
    const { value, ms } = await timed(() =>
      h.call(via, JSON.stringify({ milliseconds: LONG_MS }), { signal: controller.signal }),
    );
    const payload = payloadOf(value);
    // requestedMs is the tool's own field: the tool described its cancellation, the executor did not answer for it.
    expect(payload).toEqual({
      wasCancelled: true,
      elapsedMs: expect.any(Number),
      requestedMs: LONG_MS,
      sessionId: 'test-session',
      conversationId: 'test-conversation',
    });
    expect(payload.elapsedMs).toBeGreaterThanOrEqual(10);
    expect(payload.elapsedMs).toBeLessThan(1_000);
    expect(ms).toBeLessThan(1_000);
    expect(h.logger.entries).toEqual([]);
  });

  it('is cancelled whatever reason the caller aborts with', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user pressed stop')), 5);
    const payload = payloadOf(
      await harness(DelayTool).call(via, JSON.stringify({ milliseconds: LONG_MS }), { signal: controller.signal }),
    );
    expect(payload).toMatchObject({ wasCancelled: true, requestedMs: LONG_MS });
  });

  it.each([
    ['milliseconds is missing', '{}', "'milliseconds' is required"],
    ['milliseconds is negative', '{"milliseconds":-1}', "'milliseconds' must be >= 0, got number -1"],
    ['milliseconds is over a minute', '{"milliseconds":60001}', "'milliseconds' must be <= 60000, got number 60001"],
    ['milliseconds is not whole', '{"milliseconds":1.5}', "'milliseconds' must be integer, got number 1.5"],
    ['milliseconds is a string', '{"milliseconds":"100"}', '\'milliseconds\' must be integer, got string "100"'],
  ])('fails with INVALID_ARGUMENTS naming the field when %s', async (_case, args, expected) => {
    const error = errorOf(await harness(DelayTool).call(via, args));
    expect(error.code).toBe('INVALID_ARGUMENTS');
    expect(error.message).toContain(expected);
  });

  it('turns an exception into a generic failure, with no detail, and logs it', async () => {
    await expectGenericFailureOnException(harness(DelayTool), via, '{"milliseconds":1}');
  });
});

describe('testing_delay, cancellation in detail', () => {
  it('returns at once, cancelled, when called directly with a signal already aborted', async () => {
    const h = harness(DelayTool);
    const payload = payloadOf(
      await h.call('direct', JSON.stringify({ milliseconds: LONG_MS }), { signal: AbortSignal.abort() }),
    );
    expect(payload).toMatchObject({ wasCancelled: true, requestedMs: LONG_MS });
    // It did not wait: far under the LONG_MS it was asked for (a bound loose enough for a loaded machine).
    expect(payload.elapsedMs).toBeLessThan(1_000);
  });

  it('leaves no timer running once cancelled', async () => {
    const h = harness(DelayTool);
    // The timers made while the call starts, followed by async_hooks (a timer is destroyed when it fires
    // or is cleared): counting every active timer of the process raced with other tests' timers under load.
    const started = new Set<number>();
    const hook = createHook({
      init: (id, type) => void (type === 'Timeout' && started.add(id)),
      destroy: (id) => void started.delete(id),
    }).enable();
    try {
      const controller = new AbortController();
      const call = h.call('direct', JSON.stringify({ milliseconds: LONG_MS }), { signal: controller.signal });
      await new Promise((resolve) => setImmediate(resolve));
      expect(started.size).toBeGreaterThanOrEqual(1);
      controller.abort();
      expect(payloadOf(await call).wasCancelled).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(started.size).toBe(0);
    } finally {
      hook.disable();
    }
  });

  it('is stopped by the executor with TIMEOUT when it runs longer than the call allows', async () => {
    const h = harness(DelayTool);
    const { value, ms } = await timed(() =>
      h.call('executor', JSON.stringify({ milliseconds: LONG_MS }), { timeoutMs: 20 }),
    );
    expect(errorOf(value)).toEqual({
      message: expect.stringContaining('testing_delay did not finish within 20 ms'),
      code: 'TIMEOUT',
    });
    expect(ms).toBeLessThan(1_000);
    expect(h.logger.errors().map((entry) => entry.tag)).toEqual(['[testing_delay_ExecuteAsync__Timeout]']);
  });

  it('declares a time-out longer than its longest delay, so the executor lets a one-minute delay finish', () => {
    const { registry } = harness(DelayTool);
    expect(registry.get('testing_delay')?.timeoutMs).toBeGreaterThan(60_000);
  });
});
