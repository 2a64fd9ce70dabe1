import { Type, type Static } from 'typebox';
import {
  functionToolSchema,
  InvokeResult,
  TypedAgentTool,
  usage,
  type AgentToolExecutionContext,
  type ToolDependencies,
} from '@aptix/tool-contract';

const Args = Type.Object(
  {
    operation: Type.Enum(['add', 'subtract', 'multiply', 'divide'], {
      type: 'string',
      description: 'The arithmetic operation to apply to a and b.',
    }),
    a: Type.Number({ description: 'The left operand, a finite number.' }),
    b: Type.Number({ description: 'The right operand, a finite number; not 0 when dividing.' }),
  },
  { additionalProperties: false },
);

type Operation = Static<typeof Args>['operation'];

const OPERATIONS: Record<Operation, { readonly symbol: string; readonly apply: (a: number, b: number) => number }> = {
  add: { symbol: '+', apply: (a, b) => a + b },
  subtract: { symbol: '-', apply: (a, b) => a - b },
  multiply: { symbol: '*', apply: (a, b) => a * b },
  divide: { symbol: '/', apply: (a, b) => a / b },
};

/** Exact arithmetic on two numbers; impossible results are failed results with a code, never NaN or Infinity. */
export class CalculatorTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'testing_calculator';
  static readonly ToolUsageMetadata = usage`
    testing_calculator — Usage Guide

    Primary purpose:
    - Add, subtract, multiply or divide two numbers exactly, instead of doing the arithmetic yourself.

    Rules:
    - Use it whenever the user needs an exact result of one of the four operations.
    - One operation per call; chain calls for longer expressions, feeding each value into the next call.
    - Do not use it for anything beyond the four operations (powers, roots, units, dates).
    - Safe to call often: it has no side effects.

    Arguments:
    - operation (required): "add", "subtract", "multiply" or "divide".
    - a (required): the left operand, a finite number.
    - b (required): the right operand, a finite number; not 0 when dividing.

    Error codes:
    - INVALID_ARGUMENTS: an argument is missing, of the wrong type, not finite, or 'operation' is not one of the four.
    - DIVIDE_BY_ZERO: 'operation' is "divide" and 'b' is 0.
    - NON_FINITE_RESULT: the result is too large to represent; use smaller numbers.
    - TOOL_EXCEPTION: the tool failed unexpectedly; nothing was done. Tell the user; do not retry more than once.
    - TIMEOUT: the host stopped the call at its time-out before it finished; nothing was done.
    - A successful result with "wasCancelled": true: the caller cancelled the call before it ran; nothing was done.

    Good usage:
    - { "operation": "divide", "a": 6, "b": 3 } → value 2, expression "6 / 3 = 2"
    - { "operation": "multiply", "a": 1.5, "b": -4 } → value -6

    Bad usage:
    - { "operation": "divide", "a": 1, "b": 0 }: fails with DIVIDE_BY_ZERO.
    - { "operation": "add", "a": "2", "b": "3" }: numbers must be JSON numbers, not strings.
    - { "operation": "power", "a": 2, "b": 8 }: not a supported operation.
  `;

  static getSchema() {
    return functionToolSchema(
      CalculatorTool.ToolName,
      'Adds, subtracts, multiplies or divides two numbers and returns the value and the expression.',
      Args,
    );
  }

  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }

  protected run({ operation, a, b }: Static<typeof Args>, context: AgentToolExecutionContext) {
    if (operation === 'divide' && b === 0) {
      return InvokeResult.fromError(`${this.name} cannot divide by zero: 'b' must not be 0.`, 'DIVIDE_BY_ZERO');
    }
    const { symbol, apply } = OPERATIONS[operation];
    const value = apply(a, b);
    if (!Number.isFinite(value)) {
      return InvokeResult.fromError(
        `${this.name} cannot represent the result of ${a} ${symbol} ${b}: it is too large. Use smaller numbers.`,
        'NON_FINITE_RESULT',
      );
    }
    return {
      value,
      expression: `${a} ${symbol} ${b} = ${value}`,
      sessionId: context.sessionId ?? null,
      conversationId: context.conversationId ?? null,
    };
  }
}
