import { describe, expect, it } from 'vitest';
import { describeThrown } from './describe-thrown.js';

const hostileProxy = new Proxy(
  {},
  {
    get() {
      throw new Error('trap');
    },
    getPrototypeOf() {
      throw new Error('trap');
    },
    has() {
      throw new Error('trap');
    },
  },
);

describe('describeThrown', () => {
  it.each<[string, unknown, string | RegExp]>([
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['a string', 'boom', 'the string "boom"'],
    ['a number', 42, 'the number 42'],
    ['a symbol', Symbol('s'), 'the symbol "s"'],
    ['an Error', new TypeError('bad input'), 'TypeError: bad input'],
    ['an Error with no message', new RangeError(), 'RangeError with no message'],
    ['a plain object', { code: 1 }, 'an object (Object) that is not an Error'],
    ['a Proxy whose traps throw', hostileProxy, /cannot be (read|inspected)/],
  ])('describes %s without throwing', (_what, value, expected) => {
    const text = describeThrown(value);
    if (typeof expected === 'string') expect(text).toBe(expected);
    else expect(text).toMatch(expected);
  });

  it('describes an Error whose message getter throws', () => {
    const error = new Error('x');
    Object.defineProperty(error, 'message', {
      get() {
        throw new Error('getter');
      },
    });
    expect(describeThrown(error)).toBe('an Error whose message cannot be read (reading it threw)');
  });

  it('keeps only the first line of a message, so no stack trace is carried, and bounds long strings', () => {
    expect(describeThrown(new Error('first line\n    at evil (/x.js:1:1)'))).toBe('Error: first line');
    expect(describeThrown('y'.repeat(10_000)).length).toBeLessThan(600);
  });
});
