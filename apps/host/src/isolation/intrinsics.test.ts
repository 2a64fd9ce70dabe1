import { describe, expect, it } from 'vitest';
import { Intrinsics, probeIntrinsics } from './intrinsics.js';
import { WorkerHealth, type Unfit } from './worker-health.js';

/** Changes a built-in, sees what the checks say, and puts it back before anything else runs. */
function whileChanged(change: () => () => void): { probe: string | undefined; full: string | undefined } {
  const intrinsics = new Intrinsics();
  const restore = change();
  try {
    return { probe: probeIntrinsics(), full: intrinsics.compare() };
  } finally {
    restore();
  }
}

function replaced<T extends object>(target: T, key: keyof T & string, value: unknown): () => () => void {
  return () => {
    const descriptor = Object.getOwnPropertyDescriptor(target, key)!;
    Object.defineProperty(target, key, { ...descriptor, value });
    return () => Object.defineProperty(target, key, descriptor);
  };
}

describe('the built-ins an isolated worker keeps', () => {
  it('finds nothing while they are as they were', () => {
    expect(probeIntrinsics()).toBeUndefined();
    expect(new Intrinsics().compare()).toBeUndefined();
  });

  it.each([
    [
      'an enumerable Object.prototype property',
      () => {
        (Object.prototype as Record<string, unknown>).polluted = 'yes';
        return () => delete (Object.prototype as Record<string, unknown>).polluted;
      },
      'Object.prototype gained the enumerable property "polluted"',
    ],
    [
      'a replaced Array.prototype.push',
      replaced(Array.prototype, 'push', () => 0),
      'Array.prototype.push was replaced',
    ],
    ['a replaced JSON.parse', replaced(JSON, 'parse', () => ({})), 'JSON.parse was replaced'],
  ])('finds %s around every call (the probe)', (_what, change, message) => {
    expect(whileChanged(change)).toEqual({ probe: message, full: message });
  });

  it.each([
    [
      'a replaced String.prototype.trim',
      replaced(String.prototype, 'trim', () => ''),
      'String.prototype["trim"] was replaced or redefined',
    ],
    [
      'a getter put in place of Array.prototype.map, returning the original',
      () => {
        const descriptor = Object.getOwnPropertyDescriptor(Array.prototype, 'map')!;
        const original = descriptor.value as unknown;
        Object.defineProperty(Array.prototype, 'map', { get: () => original, configurable: true });
        return () => Object.defineProperty(Array.prototype, 'map', descriptor);
      },
      'Array.prototype["map"] was replaced or redefined',
    ],
    [
      'a non-enumerable addition to Object.prototype',
      () => {
        Object.defineProperty(Object.prototype, 'hidden', { value: 1, configurable: true });
        return () => delete (Object.prototype as Record<string, unknown>).hidden;
      },
      'Object.prototype gained "hidden"',
    ],
    [
      'a new prototype for Map.prototype',
      () => {
        const parent = Object.getPrototypeOf(Map.prototype) as object;
        Object.setPrototypeOf(Map.prototype, { get: () => 'forged' });
        return () => Object.setPrototypeOf(Map.prototype, parent);
      },
      'the prototype of Map.prototype was changed',
    ],
    [
      'a replaced global',
      replaced(globalThis, 'structuredClone', () => null),
      'globalThis.structuredClone was replaced',
    ],
  ])('finds %s in the full comparison', (_what, change, message) => {
    expect(whileChanged(change).full).toBe(message);
  });

  it('takes a value equal only to itself (Number.NaN) as unchanged', () => {
    const intrinsics = new Intrinsics();
    expect(Object.getOwnPropertyDescriptor(Number, 'NaN')?.value).toBeNaN();
    expect(intrinsics.compare()).toBeUndefined();
  });
});

describe('the memory an isolated worker holds outside the heap', () => {
  it('counts what is held, not what a call used and dropped', async () => {
    const health = new WorkerHealth(64 * 1024 * 1024);
    const afterCall = () => new Promise<Unfit | undefined>((decided) => health.afterCall(decided));
    health.baseline();
    let passing: Buffer | undefined = Buffer.alloc(128 * 1024 * 1024, 1);
    expect(passing[0]).toBe(1);
    passing = undefined;
    expect(await afterCall()).toBeUndefined();
    const held = Buffer.alloc(128 * 1024 * 1024, 1);
    const unfit = await afterCall();
    expect(unfit).toEqual({
      reason: 'memory',
      detail: expect.stringMatching(
        /^it held \d+ MiB outside the JavaScript heap \(\d+ MiB of it in Buffers and ArrayBuffers\), over its limit of 64 MiB$/,
      ),
    });
    // Unfit stays unfit: the worker is being replaced.
    expect(health.beforeCall()).toBe(unfit);
    expect(held.length).toBe(128 * 1024 * 1024);
  });
});
