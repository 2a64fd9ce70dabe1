/**
 * Output schemas: a tool declares `OutputSchema`; the registry checks it at start-up (naming the tool
 * and the fix), lists it for MCP, and the executor refuses a result that does not match it.
 */
import { Type, type Static } from 'typebox';
import { describe, expect, it } from 'vitest';
import type { ToolDependencies } from './agent-tool.js';
import { Content } from './content.js';
import { ContractErrorCode, ExecutionErrorCode, ToolContractError } from './errors.js';
import { InvokeResult } from './invoke-result.js';
import { functionToolSchema, type FunctionToolSchema, type ObjectSchemaLike } from './schema.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool, type RunOutput } from './typed-agent-tool.js';

const Args = Type.Object(
  {
    a: Type.Number({ description: 'First addend.' }),
    b: Type.Number({ description: 'Second addend.' }),
    lie: Type.Optional(Type.Boolean({ description: 'Answer with a wrong shape.' })),
  },
  { additionalProperties: false },
);
const Sum = Type.Object({ sum: Type.Number({ description: 'a + b.' }) }, { additionalProperties: false });

class AddTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName: string = 'test_add';
  static readonly ToolUsageMetadata: string = 'Adds two numbers.';
  static readonly OutputSchema: ObjectSchemaLike = Sum;
  static getSchema(): FunctionToolSchema {
    return functionToolSchema(this.ToolName, 'Adds two numbers.', Args);
  }
  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }
  protected run({ a, b, lie }: Static<typeof Args>): RunOutput {
    return lie ? { sum: String(a + b) } : { sum: a + b };
  }
}

/** The same tool, declaring a given output schema. */
function withOutputSchema(schema: unknown) {
  return class extends AddTool {
    static override readonly ToolName = 'test_add_declared';
    static override readonly ToolUsageMetadata = 'Adds two numbers.';
    static override readonly OutputSchema = schema as ObjectSchemaLike;
  };
}

describe('output schemas', () => {
  it('lists the output schema for MCP, as plain JSON, and only for tools that declare one', () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(AddTool);
    const [definition] = registry.definitions('mcp');
    expect(definition!.outputSchema).toEqual({
      type: 'object',
      properties: { sum: { type: 'number', description: 'a + b.' } },
      required: ['sum'],
      additionalProperties: false,
    });
    expect(Object.getOwnPropertySymbols(definition!.outputSchema!)).toEqual([]);
    expect(registry.definitions('responses')[0]).not.toHaveProperty('outputSchema');
    const plain = new AgentToolRegistry();
    plain.registerTool(
      class extends AddTool {
        static override readonly ToolName = 'test_plain';
        static override readonly ToolUsageMetadata = 'Adds two numbers.';
        static override readonly OutputSchema = undefined as unknown as ObjectSchemaLike;
      },
    );
    expect(plain.definitions('mcp')[0]).not.toHaveProperty('outputSchema');
  });

  it('passes a result that matches, and refuses one that does not with OUTPUT_SCHEMA_MISMATCH, sending nothing of it', async () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(AddTool);
    const executor = new AgentToolExecutor({ registry });
    expect(await executor.execute('test_add', { a: 2, b: 3 })).toEqual({
      successful: true,
      result: '{"sum":5}',
      errors: [],
    });
    const bad = await executor.execute('test_add', { a: 2, b: 3, lie: true });
    expect(bad).toEqual({
      successful: false,
      result: null,
      errors: [
        {
          code: ExecutionErrorCode.OUTPUT_SCHEMA_MISMATCH,
          message: expect.stringContaining('does not match its declared output schema (result.sum must be number)'),
        },
      ],
    });
    expect(JSON.stringify(bad)).not.toContain('"5"');
  });

  it('checks the value a tool gives beside content blocks, and refuses content whose description does not match', async () => {
    const registry = new AgentToolRegistry();
    const Pixel = class extends AddTool {
      static override readonly ToolName = 'test_pixel';
      static override readonly ToolUsageMetadata = 'Draws a pixel.';
      protected override run({ a, b, lie }: Static<typeof Args>): RunOutput {
        return lie
          ? InvokeResult.withContent([Content.text('no value')])
          : InvokeResult.withContent([Content.image(Buffer.from([1, 2, 3]), 'image/png')], { sum: a + b });
      }
    };
    registry.registerTool(Pixel);
    const executor = new AgentToolExecutor({ registry });
    const good = await executor.execute('test_pixel', { a: 1, b: 1 });
    expect(good.successful && [good.result, good.content?.length]).toEqual(['{"sum":2}', 1]);
    expect((await executor.execute('test_pixel', { a: 1, b: 1, lie: true })).errors[0]?.code).toBe(
      ExecutionErrorCode.OUTPUT_SCHEMA_MISMATCH,
    );
  });

  const invalid: Array<[string, unknown, RegExp]> = [
    ['not an object schema', Type.Array(Type.String()), /must describe an object \(type: 'object' at its root\)/],
    [
      'a type that is not a JSON type',
      { type: 'object', properties: { n: { type: 'float' } } },
      /is not a valid JSON Schema: OutputSchema.properties.n.type must be equal to one of the allowed values/,
    ],
    ['an unknown keyword', { type: 'object', properties: {}, colour: 'red' }, /unknown keyword 'colour'/],
    [
      'a required name without a property',
      { type: 'object', properties: {}, required: ['total'] },
      /required 'total' is not among its properties/,
    ],
    ['a string', 'object', /must be a JSON Schema object, got string/],
    [
      'a reference that resolves nowhere',
      { type: 'object', properties: { x: { $ref: '#/definitions/missing' } } },
      /does not compile/,
    ],
  ];
  for (const [what, schema, message] of invalid) {
    it(`stops start-up on an output schema that is ${what}, naming the tool and the fix`, () => {
      const registry = new AgentToolRegistry();
      let thrown: unknown;
      try {
        registry.registerTool(withOutputSchema(schema));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ToolContractError);
      const error = thrown as ToolContractError;
      expect(error.code).toBe(ContractErrorCode.OUTPUT_SCHEMA_INVALID);
      expect(error.message).toMatch(/^Tool "test_add_declared" \(.*\) breaks the tool contract: /);
      expect(error.message).toMatch(message);
      expect(error.message).toContain(
        'Fix: declare it with TypeBox as an object, e.g. static readonly OutputSchema = Type.Object(',
      );
      expect(registry.has('test_add_declared')).toBe(false);
    });
  }
});
