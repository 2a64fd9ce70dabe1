import { describe, expect, it } from 'vitest';
import { decodeArguments } from './arguments.js';
import { closedToPrototypeKeys } from './closed-schema.js';
import type { JsonSchema } from './schema.js';

const closed: JsonSchema = {
  type: 'object',
  properties: {
    text: { type: 'string', minLength: 1 },
    count: { type: 'integer', minimum: 1 },
    tags: { type: 'array', items: { type: 'string' } },
    point: { type: 'object', properties: { x: { type: 'number' } }, additionalProperties: false },
    either: { anyOf: [{ type: 'string' }, { type: 'object', properties: {}, additionalProperties: false }] },
  },
  required: ['text'],
  additionalProperties: false,
};
// The same keys, but the root admits any other key: prototype keys are found by scanning, as always.
const open: JsonSchema = { ...closed, additionalProperties: true };

describe('closedToPrototypeKeys', () => {
  it('holds for schemas closed at every depth, as strict-mode tools declare them', () => {
    expect(closedToPrototypeKeys(closed)).toBe(true);
    expect(closedToPrototypeKeys({ type: ['object', 'null'], properties: {}, additionalProperties: false })).toBe(true);
  });

  it.each<[string, unknown]>([
    ['an object that admits other keys', open],
    ['an object without additionalProperties', { type: 'object', properties: { a: { type: 'string' } } }],
    ['no type at all', { properties: {}, additionalProperties: false }],
    [
      'a property with an enum but no type (counted as open)',
      { type: 'object', additionalProperties: false, properties: { mode: { enum: ['a', null] } } },
    ],
    ['a boolean schema', true],
    [
      'an open object inside',
      { type: 'object', properties: { inner: { type: 'object' } }, additionalProperties: false },
    ],
    ['an array of anything', { type: 'object', properties: { list: { type: 'array' } }, additionalProperties: false }],
    ['tuple items', { type: 'array', items: [{ type: 'string' }] }],
    [
      'a declared __proto__ property',
      {
        type: 'object',
        properties: JSON.parse('{"__proto__":{"type":"string"}}') as object,
        additionalProperties: false,
      },
    ],
    [
      'a declared constructor property',
      {
        type: 'object',
        properties: { constructor: { type: 'object', properties: {}, additionalProperties: false } },
        additionalProperties: false,
      },
    ],
    [
      'patternProperties',
      { type: 'object', patternProperties: { '^x': { type: 'string' } }, additionalProperties: false },
    ],
    ['a $ref', { type: 'object', properties: { a: { $ref: '#/definitions/a' } }, additionalProperties: false }],
    ['allOf', { allOf: [{ type: 'object', additionalProperties: false }] }],
    ['an open anyOf branch', { anyOf: [{ type: 'string' }, { type: 'object' }] }],
    ['an object const', { type: 'object', properties: { a: { const: { b: 1 } } }, additionalProperties: false }],
    ['an unknown type', { type: 'thing' }],
  ])('does not hold for %s', (_what, schema) => {
    expect(closedToPrototypeKeys(schema)).toBe(false);
  });
});

describe('decodeArguments on a schema closed to prototype keys', () => {
  it.each([
    '{"__proto__":{"polluted":true},"text":"x"}',
    '{"text":"x","\\u005f_proto__":{"polluted":true}}',
    '{"text":"x","point":{"__proto__":{"polluted":true}}}',
    '{"text":"x","either":{"constructor":{"prototype":{"polluted":true}}}}',
    '{"constructor":{"prototype":{"polluted":true}},"text":"x"}',
  ])('refuses %s naming the forbidden key, exactly as for an open schema', (text) => {
    const fromClosed = decodeArguments('demo', closed, text);
    expect(fromClosed).toMatchObject({
      ok: false,
      message:
        'Invalid arguments for demo: the arguments contain a forbidden key (__proto__, or constructor.prototype); remove it.',
    });
    expect(fromClosed).toEqual(decodeArguments('demo', open, text));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts what the schema accepts, and refuses the rest with the usual named fields', () => {
    expect(decodeArguments('demo', closed, '{"text":"x","tags":["a"],"point":{"x":1},"either":{}}')).toEqual({
      ok: true,
      value: { text: 'x', tags: ['a'], point: { x: 1 }, either: {} },
    });
    expect(decodeArguments('demo', closed, '{"text":"x","prototype":1}')).toMatchObject({
      ok: false,
      message:
        "Invalid arguments for demo: 'prototype' is not an argument of this tool (its arguments: text, count, tags, point, either).",
    });
    expect(decodeArguments('demo', closed, '{"text":"","count":0}')).toMatchObject({
      ok: false,
      message:
        "Invalid arguments for demo: 'text' must NOT have fewer than 1 characters, got string \"\"; 'count' must be >= 1, got number 0.",
    });
    expect(decodeArguments('demo', closed, '{"text":')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/not valid JSON/) as unknown,
    });
  });
});
