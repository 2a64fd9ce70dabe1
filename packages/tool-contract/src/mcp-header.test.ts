/**
 * `x-mcp-header` (SEP-2243): a tool may mirror a parameter into an MCP request header. The registry
 * accepts the annotation where the specification allows it, refuses it elsewhere with the place and
 * the fix, lists it for MCP, and keeps it out of the OpenAI strict-mode view.
 */
import { Type, type Static, type TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import type { ToolDependencies } from './agent-tool.js';
import { ContractErrorCode, ToolContractError } from './errors.js';
import { functionToolSchema, type FunctionToolSchema } from './schema.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool, type RunOutput } from './typed-agent-tool.js';

/** A tool class whose parameters are `properties`, named `name`. */
function toolWith(properties: Record<string, TSchema>, name = 'test_routed') {
  const Args = Type.Object(properties, { additionalProperties: false });
  return class extends TypedAgentTool<typeof Args> {
    static readonly ToolName: string = name;
    static readonly ToolUsageMetadata: string = 'Routes by region.';
    static getSchema(): FunctionToolSchema {
      return functionToolSchema(name, 'Routes by region.', Args);
    }
    constructor({ logger }: ToolDependencies) {
      super(Args, logger);
    }
    protected run(args: Static<typeof Args>): RunOutput {
      return args;
    }
  };
}

function refusal(properties: Record<string, TSchema>): ToolContractError {
  try {
    new AgentToolRegistry().registerTools([toolWith(properties)]);
  } catch (error) {
    return error as ToolContractError;
  }
  throw new Error('the registry accepted it');
}

describe('x-mcp-header on a parameter', () => {
  it('is accepted on string, integer and boolean properties, nested through properties too, and listed for MCP as declared', () => {
    const registry = new AgentToolRegistry();
    registry.registerTools([
      toolWith({
        region: Type.String({ 'x-mcp-header': 'Region', description: 'Where the call is routed.' }),
        shard: Type.Integer({ 'x-mcp-header': 'Shard', description: 'Shard number.' }),
        dryRun: Type.Boolean({ 'x-mcp-header': 'Dry-Run', description: 'Change nothing.' }),
        target: Type.Object(
          { tenant: Type.String({ 'x-mcp-header': 'Tenant', description: 'Tenant id.' }) },
          { description: 'Where to.', additionalProperties: false },
        ),
      }),
    ]);
    const [mcp] = registry.definitions('mcp');
    const properties = (mcp!.inputSchema as { properties: Record<string, Record<string, unknown>> }).properties;
    expect(properties.region!['x-mcp-header']).toBe('Region');
    expect((properties.target!.properties as Record<string, Record<string, unknown>>).tenant!['x-mcp-header']).toBe(
      'Tenant',
    );
  });

  it('is left out of the OpenAI strict-mode view, which keeps everything else', () => {
    const registry = new AgentToolRegistry();
    registry.registerTools([
      toolWith({
        region: Type.String({ 'x-mcp-header': 'Region', description: 'Where the call is routed.', enum: ['eu', 'us'] }),
      }),
    ]);
    const [responses] = registry.definitions('responses');
    expect(responses!.strict).toBe(true);
    expect(JSON.stringify(responses!.parameters)).not.toContain('x-mcp-header');
    expect((responses!.parameters as { properties: Record<string, unknown> }).properties.region).toMatchObject({
      type: 'string',
      enum: ['eu', 'us'],
    });
  });

  it.each([
    [
      'a number property (the specification leaves number out)',
      { amount: Type.Number({ 'x-mcp-header': 'Amount', description: 'x' }) },
      /type "number"; only string, integer and boolean/,
    ],
    [
      'an object property',
      { target: Type.Object({}, { 'x-mcp-header': 'Target', description: 'x' }) },
      /type "object"/,
    ],
    [
      'an array item',
      { tags: Type.Array(Type.String({ 'x-mcp-header': 'Tag' }), { description: 'x' }) },
      /parameters\.tags\.<items>: x-mcp-header may only stand on a property reached through "properties" alone/,
    ],
    [
      'a branch of anyOf',
      { key: Type.Union([Type.String({ 'x-mcp-header': 'Key' }), Type.Integer()], { description: 'x' }) },
      /<anyOf>/,
    ],
    [
      'a name with a space',
      { region: Type.String({ 'x-mcp-header': 'My Region', description: 'x' }) },
      /"My Region" is not an HTTP header name/,
    ],
    [
      'a name with CR LF (header injection)',
      { region: Type.String({ 'x-mcp-header': 'Region\r\nX-Evil: 1', description: 'x' }) },
      /is not an HTTP header name/,
    ],
    [
      'an empty name',
      { region: Type.String({ 'x-mcp-header': '', description: 'x' }) },
      /"" is not an HTTP header name/,
    ],
    [
      'a name that is not a string',
      { region: Type.String({ 'x-mcp-header': 7, description: 'x' } as never) },
      /x-mcp-header|not a valid JSON Schema/,
    ],
    [
      'two names that differ only in case',
      {
        a: Type.String({ 'x-mcp-header': 'Region', description: 'x' }),
        b: Type.String({ 'x-mcp-header': 'REGION', description: 'y' }),
      },
      /"REGION" is already used by parameters\.a; header names must differ whatever their case/,
    ],
  ])('is refused on %s, naming the place and the fix', (_case, properties, message) => {
    const error = refusal(properties as Record<string, TSchema>);
    expect(error).toBeInstanceOf(ToolContractError);
    expect(error.violations.map((violation) => violation.code)).toContain(ContractErrorCode.SCHEMA_PARAMETERS_INVALID);
    expect(error.message).toMatch(message);
    expect(error.message).toContain('test_routed');
  });
});
