import { describe, expect, it } from 'vitest';
import { testContext } from '@aptix/tool-contract/testing';
import { errorOf, expectGenericFailureOnException, harness, payloadOf, VIAS } from '../test/harness.js';
import { CalculatorTool } from './calculator.tool.js';

describe.each(VIAS)('testing_calculator, called %s', (via) => {
  it.each([
    ['add', 2, 3, 5, '2 + 3 = 5'],
    ['subtract', 2, 3, -1, '2 - 3 = -1'],
    ['multiply', 1.5, -4, -6, '1.5 * -4 = -6'],
    ['divide', 6, 3, 2, '6 / 3 = 2'],
    ['divide', 0, 5, 0, '0 / 5 = 0'],
  ])('%s %d and %d gives %d', async (operation, a, b, value, expression) => {
    const payload = payloadOf(await harness(CalculatorTool).call(via, JSON.stringify({ operation, a, b })));
    expect(payload).toEqual({ value, expression, sessionId: 'test-session', conversationId: 'test-conversation' });
  });

  it('carries the ids of the call it serves', async () => {
    const payload = payloadOf(
      await harness(CalculatorTool).call(via, '{"operation":"add","a":1,"b":1}', {
        context: testContext({ sessionId: 's-9', conversationId: 'c-9' }),
      }),
    );
    expect(payload).toMatchObject({ sessionId: 's-9', conversationId: 'c-9' });
  });

  it.each([0, -0])('fails with DIVIDE_BY_ZERO when dividing by %d', async (b) => {
    const error = errorOf(
      await harness(CalculatorTool).call(via, `{"operation":"divide","a":1,"b":${Object.is(b, -0) ? '-0' : '0'}}`),
    );
    expect(error).toEqual({
      message: "testing_calculator cannot divide by zero: 'b' must not be 0.",
      code: 'DIVIDE_BY_ZERO',
    });
  });

  it.each([
    ['multiply', 1e308, 10],
    ['add', 1.7e308, 1.7e308],
    ['divide', 1e308, 1e-10],
  ])('fails with NON_FINITE_RESULT when %s overflows', async (operation, a, b) => {
    const error = errorOf(await harness(CalculatorTool).call(via, JSON.stringify({ operation, a, b })));
    expect(error.code).toBe('NON_FINITE_RESULT');
    expect(error.message).toContain('testing_calculator cannot represent the result');
    expect(error.message).toContain('too large');
  });

  it.each([
    [
      'operation is not one of the four',
      '{"operation":"power","a":2,"b":8}',
      `'operation' must be one of "add", "subtract", "multiply", "divide", got string "power"`,
    ],
    ['operation is missing', '{"a":2,"b":8}', "'operation' is required"],
    ['a is a string', '{"operation":"add","a":"2","b":3}', '\'a\' must be number, got string "2"'],
    ['b is missing', '{"operation":"add","a":2}', "'b' is required"],
    [
      'a is too large to be finite',
      '{"operation":"add","a":1e400,"b":1}',
      "'a' must be a finite number, got Infinity (is the number too large for JSON?)",
    ],
    [
      'b is too large to be finite',
      '{"operation":"divide","a":1,"b":-1e400}',
      "'b' must be a finite number, got -Infinity (is the number too large for JSON?)",
    ],
  ])('fails with INVALID_ARGUMENTS naming the field when %s', async (_case, args, expected) => {
    const error = errorOf(await harness(CalculatorTool).call(via, args));
    expect(error.code).toBe('INVALID_ARGUMENTS');
    expect(error.message).toContain('Invalid arguments for testing_calculator');
    expect(error.message).toContain(expected);
  });

  it('turns an exception into a generic failure, with no detail, and logs it', async () => {
    await expectGenericFailureOnException(harness(CalculatorTool), via, '{"operation":"add","a":1,"b":2}');
  });
});

describe('testing_calculator through the executor, with arguments already parsed', () => {
  // JSON text cannot carry NaN, but an object (an HTTP body built in code) can: the schema still refuses it.
  it('refuses NaN sent in an object, naming the field', async () => {
    const { executor } = harness(CalculatorTool);
    const error = errorOf(
      await executor.execute('testing_calculator', { operation: 'add', a: 1, b: Number.NaN }, testContext()),
    );
    expect(error).toEqual({
      message: "Invalid arguments for testing_calculator: 'b' must be a finite number, got NaN.",
      code: 'INVALID_ARGUMENTS',
    });
  });
});
