import { describe, expect, it } from 'vitest';
import { classifyInboundRequest, isSpecType, specTypeSchemas, type CallToolResult } from '@modelcontextprotocol/server';
import { checkedCallResult, isCallToolParams, sameJson, validEnvelope } from './lane-checks.js';

/**
 * The fast lane's own checks must say what the SDK's zod schemas say, for every value the lane can
 * meet: odd, hostile and edge values of each field, one at a time and combined.
 */

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'x', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

const NAMES: unknown[] = [
  'testing_ping_pong',
  '',
  ' ',
  'ü'.repeat(300),
  0,
  1.5,
  null,
  true,
  [],
  ['a'],
  {},
  { name: 'x' },
];
const ARGUMENTS: unknown[] = [
  undefined,
  {},
  { a: 1 },
  { nested: { deep: [1, 2, { x: null }] } },
  JSON.parse('{"__proto__": {"polluted": true}}'),
  JSON.parse('{"constructor": {"prototype": {"isPrototypeOf": 1}}}'),
  JSON.parse('{"constructor": 5}'),
  JSON.parse('{"hasOwnProperty": "x", "toString": 1}'),
  null,
  [],
  [1, 2],
  'text',
  0,
  false,
];
const TOKENS: unknown[] = [
  undefined,
  'token',
  '',
  0,
  -1,
  7,
  1.5,
  2 ** 53,
  2 ** 53 - 1,
  -(2 ** 53),
  1e300,
  null,
  true,
  {},
  [],
  ['t'],
];
const METAS: unknown[] = [
  undefined,
  {},
  ENVELOPE,
  { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': 5 },
  { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': 'nobody' },
  null,
  [],
  'meta',
  3,
];

function params(name: unknown, args: unknown, meta: unknown): Record<string, unknown> {
  const value: Record<string, unknown> = { name };
  if (args !== undefined) value.arguments = args;
  if (meta !== undefined) value._meta = meta;
  return value;
}

describe('isCallToolParams', () => {
  it("says what the SDK's CallToolRequest schema says, over every combination of odd fields", () => {
    let checked = 0;
    for (const name of NAMES) {
      for (const args of ARGUMENTS) {
        for (const meta of METAS) {
          const p = params(name, args, meta);
          expect([p, isCallToolParams(p)]).toEqual([
            p,
            isSpecType.CallToolRequest({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: p }),
          ]);
          checked += 1;
        }
      }
    }
    expect(checked).toBe(NAMES.length * ARGUMENTS.length * METAS.length);
  });

  it('judges the progress token as the SDK does: a string or a safe integer', () => {
    for (const token of TOKENS) {
      for (const meta of [{ progressToken: token }, { ...ENVELOPE, progressToken: token }]) {
        if (token === undefined) delete (meta as { progressToken?: unknown }).progressToken;
        const p = params('testing_ping_pong', { a: 1 }, meta);
        expect([token, isCallToolParams(p)]).toEqual([
          token,
          isSpecType.CallToolRequest({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: p }),
        ]);
      }
    }
  });

  it('refuses what the SDK refuses in the common call: a numeric name, array arguments, a fractional token', () => {
    expect(isCallToolParams({ name: 7 })).toBe(false);
    expect(isCallToolParams({ name: 'x', arguments: [] })).toBe(false);
    expect(isCallToolParams({ name: 'x', _meta: { progressToken: 0.5 } })).toBe(false);
    expect(isCallToolParams({ name: 'x', arguments: { a: 1 }, _meta: { progressToken: 'p' } })).toBe(true);
  });
});

describe('checkedCallResult', () => {
  const sdk = (result: CallToolResult) =>
    specTypeSchemas.CallToolResult['~standard'].validate(
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the test guards what the declared type rules out
      result.content === undefined ? { ...result, content: [] } : result,
    );

  const RESULTS: unknown[] = [
    { content: [{ type: 'text', text: '{"reply":"pong"}' }] },
    { content: [] },
    {},
    { isError: true, content: [{ type: 'text', text: 'failed' }] },
    { content: [{ type: 'text', text: 'a' }], isError: false },
    {
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    },
    { content: [{ type: 'text', text: 'a', extra: 1 }] },
    { content: [{ type: 'text', text: 'a', annotations: { priority: 2 } }] },
    { content: [{ type: 'text', text: 'a', annotations: { priority: 0.5, audience: ['user'] } }] },
    { content: [{ type: 'text', text: 5 }] },
    { content: [{ type: 'text' }] },
    { content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }] },
    { content: [{ type: 'image', data: 'not base64!', mimeType: 'image/png' }] },
    { content: [null] },
    { content: ['text'] },
    { content: 'text' },
    { content: { type: 'text', text: 'a' } },
    { content: [{ type: 'text', text: 'a' }], isError: 'yes' },
    { content: [{ type: 'text', text: 'a' }], structuredContent: { reply: 'pong' } },
    { content: [{ type: 'text', text: 'a' }], structuredContent: [1] },
    { content: [{ type: 'text', text: 'a' }], _meta: { progressToken: 1.5 } },
    { content: [{ type: 'text', text: 'a' }], _meta: { note: 'kept' } },
    { content: [{ type: 'text', text: 'a' }], resultType: 'complete' },
    { content: [{ type: 'text', text: 'a' }], isError: undefined },
  ];

  it("gives the SDK's verdict and the SDK's value (its keys in the schema's order) for each result", () => {
    for (const result of RESULTS) {
      const ours = checkedCallResult(result as CallToolResult);
      const theirs = sdk(result as CallToolResult);
      if (theirs.issues !== undefined) {
        expect([result, 'issues' in ours]).toEqual([result, true]);
        expect('issues' in ours && ours.issues.map((issue) => issue.message)).toEqual(
          theirs.issues.map((issue) => issue.message),
        );
      } else {
        expect([result, 'value' in ours && JSON.stringify(ours.value)]).toEqual([result, JSON.stringify(theirs.value)]);
      }
    }
  });
});

describe('validEnvelope', () => {
  const classify = (meta: Record<string, unknown>) => {
    const outcome = classifyInboundRequest({
      httpMethod: 'POST',
      body: { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { _meta: meta } },
      protocolVersionHeader: '2026-07-28',
      mcpMethodHeader: 'tools/call',
    });
    return (
      outcome.kind === 'modern' && outcome.messageKind === 'request' && outcome.classification.revision === '2026-07-28'
    );
  };
  const ENVELOPES: Record<string, unknown>[] = [
    ENVELOPE,
    { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 'x', version: 1 } },
    { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { version: '1', name: 'x' } },
    { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 'x' } },
    { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } },
    { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': [] },
    { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': null },
    { ...ENVELOPE, 'io.modelcontextprotocol/logLevel': 'debug' },
    { ...ENVELOPE, 'io.modelcontextprotocol/logLevel': 'loud' },
    { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
    {
      ...ENVELOPE,
      'io.modelcontextprotocol/clientCapabilities': {
        experimental: { deep: Array.from({ length: 400 }, (_, i) => i) },
      },
    },
    {
      ...ENVELOPE,
      'io.modelcontextprotocol/clientCapabilities': {
        experimental: { deep: Array.from({ length: 400 }, (_, i) => (i === 399 ? 'x' : i)) },
      },
    },
  ];

  it("gives the classifier's verdict for each envelope, asked first and again (kept verdicts never leak to a different envelope)", () => {
    for (let round = 0; round < 3; round++) {
      for (const envelope of ENVELOPES) {
        const copy = JSON.parse(JSON.stringify(envelope)) as Record<string, unknown>;
        expect([envelope, validEnvelope('tools/call', copy)]).toEqual([envelope, classify(envelope)]);
      }
    }
  });

  it('is not fooled by a kept envelope changed after it was judged', () => {
    const envelope = JSON.parse(
      JSON.stringify({ ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 'kept', version: '1' } }),
    ) as Record<string, unknown>;
    expect(validEnvelope('tools/call', envelope)).toBe(true);
    (envelope['io.modelcontextprotocol/clientInfo'] as Record<string, unknown>).version = 7;
    expect(validEnvelope('tools/call', envelope)).toBe(classify(envelope));
  });
});

describe('sameJson', () => {
  const VALUES: unknown[] = [
    null,
    0,
    -0,
    1,
    '1',
    '',
    true,
    false,
    [],
    {},
    [1],
    ['1'],
    { a: 1 },
    { a: '1' },
    { a: 1, b: 2 },
    { b: 2, a: 1 },
    { a: [1, { b: null }] },
    { a: [1, { b: false }] },
    JSON.parse('{"__proto__": 1}'),
    JSON.parse('{"__proto__": 2}'),
    { a: undefined },
    [[[]]],
    [[[0]]],
  ];

  it('equals JSON.stringify equality up to the order of keys', () => {
    const canonical = (value: unknown): string =>
      JSON.stringify(value, (_key, v: unknown) =>
        v !== null && typeof v === 'object' && !Array.isArray(v)
          ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)))
          : v,
      );
    for (const a of VALUES) {
      for (const b of VALUES) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, a function or a symbol, whatever its declared type says
        if (JSON.stringify(a)?.includes('undefined') || JSON.stringify(b)?.includes('undefined')) continue;
        const parsedA = JSON.parse((JSON.stringify(a) as string | undefined) ?? 'null') as unknown;
        const parsedB = JSON.parse((JSON.stringify(b) as string | undefined) ?? 'null') as unknown;
        expect([a, b, sameJson(parsedA, parsedB, { left: 1000 })]).toEqual([
          a,
          b,
          canonical(parsedA) === canonical(parsedB),
        ]);
      }
    }
  });

  it('says no once its budget of values runs out, however alike the values', () => {
    const big = Array.from({ length: 50 }, (_, i) => i);
    expect(sameJson(big, [...big], { left: 51 })).toBe(true);
    expect(sameJson(big, [...big], { left: 50 })).toBe(false);
  });
});
