import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ToolProgress } from './agent-tool.js';
import { cleanProgress, progressGate } from './progress-gate.js';

describe('progressGate', () => {
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'],
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends a short sequence as it comes', () => {
    const sent: ToolProgress[] = [];
    const gate = progressGate((p) => sent.push(p));
    gate.report({ progress: 0, total: 3 });
    gate.report({ progress: 1, total: 3, message: 'one' });
    gate.report({ progress: 2, total: 3 });
    expect(sent).toEqual([
      { progress: 0, total: 3 },
      { progress: 1, total: 3, message: 'one' },
      { progress: 2, total: 3 },
    ]);
  });

  it('bounds a flood to the burst, then the rate, always carrying the newest value, and ends on the last one', () => {
    const sent: ToolProgress[] = [];
    const gate = progressGate((p) => sent.push(p), { burst: 4, perSecond: 10 });
    for (let i = 1; i <= 10_000; i++) gate.report({ progress: i });
    expect(sent.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
    vi.advanceTimersByTime(100);
    expect(sent.map((p) => p.progress)).toEqual([1, 2, 3, 4, 10_000]);
    // One second of flooding at 100 reports per millisecond: about perSecond more events, each the newest.
    let next = 10_001;
    for (let ms = 0; ms < 1000; ms++) {
      for (let i = 0; i < 100; i++) gate.report({ progress: next++ });
      vi.advanceTimersByTime(1);
    }
    expect(sent.length).toBeLessThanOrEqual(5 + 11);
    expect(sent.length).toBeGreaterThanOrEqual(5 + 9);
    const values = sent.map((p) => p.progress);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
    gate.report({ progress: next });
    gate.end();
    expect(sent.at(-1)).toEqual({ progress: next });
  });

  it('drops what comes after end(), and sends nothing when nothing waits', () => {
    const deliver = vi.fn();
    const gate = progressGate(deliver);
    gate.report({ progress: 1 });
    gate.end();
    gate.report({ progress: 2 });
    vi.advanceTimersByTime(10_000);
    expect(deliver).toHaveBeenCalledTimes(1);
  });

  it('never sends a waiting report after end() from its timer', () => {
    const sent: number[] = [];
    const gate = progressGate((p) => sent.push(p.progress), {
      burst: 1,
      perSecond: 1,
    });
    gate.report({ progress: 1 });
    gate.report({ progress: 2 });
    gate.end();
    vi.advanceTimersByTime(5000);
    expect(sent).toEqual([1, 2]);
  });

  it('survives a caller that throws', () => {
    const gate = progressGate(() => {
      throw new Error('socket gone');
    });
    expect(() => gate.report({ progress: 1 })).not.toThrow();
  });
});

describe('cleanProgress', () => {
  it('drops non-finite, non-numeric and non-growing progress', () => {
    for (const progress of [Number.NaN, Infinity, -Infinity, '5', null, undefined, 10n])
      expect(cleanProgress({ progress }, -Infinity)).toBeUndefined();
    expect(cleanProgress({ progress: 3 }, 3)).toBeUndefined();
    expect(cleanProgress({ progress: 2 }, 3)).toBeUndefined();
    expect(cleanProgress(null, -Infinity)).toBeUndefined();
    expect(cleanProgress('50%', -Infinity)).toBeUndefined();
  });

  it('leaves out a total that is not finite and a message that is not a string; cuts a huge message', () => {
    expect(cleanProgress({ progress: 1, total: Infinity, message: { toString: () => 'x' } }, 0)).toEqual({
      progress: 1,
    });
    expect(cleanProgress({ progress: 1, total: Number.NaN }, 0)).toEqual({
      progress: 1,
    });
    const huge = cleanProgress({ progress: 1, message: 'x'.repeat(5_000_000) }, 0, 1000);
    expect(huge?.message).toHaveLength(1000);
  });

  it('drops a report whose fields throw when read', () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('gotcha');
        },
      },
    );
    expect(cleanProgress(hostile, -Infinity)).toBeUndefined();
    const getter = Object.defineProperty({}, 'progress', {
      get: () => {
        throw new Error('gotcha');
      },
    });
    expect(cleanProgress(getter, -Infinity)).toBeUndefined();
  });
});
