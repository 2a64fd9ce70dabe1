/**
 * Parameters in JSON Schema 2020-12 (`"$schema": "https://json-schema.org/draft/2020-12/schema"`):
 * registered under the 2020-12 dialect, listed unchanged for MCP, and enforced on every call, with
 * `required` in conditional branches naming the enclosing object's properties.
 */
import { describe, expect, it } from 'vitest';
import type { ToolDependencies } from './agent-tool.js';
import { JSON_SCHEMA_2020_12 } from './ajv.js';
import { ContractErrorCode, ExecutionErrorCode, ToolContractError } from './errors.js';
import { functionToolSchema, type ObjectSchemaLike } from './schema.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool } from './typed-agent-tool.js';

const CONTACT = {
  $schema: JSON_SCHEMA_2020_12,
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string', description: 'Who to contact.' },
    address: { $ref: '#addressDef', type: 'object', description: 'Where they live.' },
    contactMethod: { type: 'string', enum: ['phone', 'email'], description: 'How to reach them.' },
    phone: { type: 'string', description: 'Phone number.' },
    email: { type: 'string', description: 'Email address.' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
} as const;

function contactTool(parameters: object) {
  return class ContactTool extends TypedAgentTool<never> {
    static readonly ToolName = 'test_contact';
    static readonly ToolUsageMetadata = 'Stores a contact.';
    static getSchema() {
      return functionToolSchema('test_contact', 'Stores a contact.', parameters as ObjectSchemaLike);
    }
    constructor({ logger }: ToolDependencies) {
      super(parameters as never, logger);
    }
    protected run(args: object) {
      return { stored: args };
    }
  };
}

describe('JSON Schema 2020-12 parameters', () => {
  it('registers them, lists them for MCP with every keyword kept, and enforces them on calls', async () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(contactTool(CONTACT));
    const { inputSchema } = registry.definitions('mcp')[0]!;
    for (const keyword of ['$schema', '$defs', 'allOf', 'if', 'then', 'else', 'additionalProperties'] as const)
      expect(inputSchema[keyword]).toEqual(CONTACT[keyword]);
    const executor = new AgentToolExecutor({ registry });
    expect((await executor.execute('test_contact', { name: 'Ada', email: 'ada@example.com' })).successful).toBe(true);
    expect(
      (
        await executor.execute('test_contact', {
          name: 'Ada',
          contactMethod: 'phone',
          phone: '1',
          address: { city: 'London' },
        })
      ).successful,
    ).toBe(true);
    const noPhone = await executor.execute('test_contact', {
      name: 'Ada',
      contactMethod: 'phone',
      email: 'ada@example.com',
    });
    expect(noPhone.errors[0]).toMatchObject({
      code: ExecutionErrorCode.INVALID_ARGUMENTS,
      message: expect.stringContaining('phone'),
    });
    // The anchor reference is resolved: a street must be a string.
    expect((await executor.execute('test_contact', { email: 'a@b', address: { street: 12 } })).errors[0]?.code).toBe(
      ExecutionErrorCode.INVALID_ARGUMENTS,
    );
  });

  it('still refuses a required name no enclosing object declares', () => {
    const registry = new AgentToolRegistry();
    const broken = { ...CONTACT, then: { required: ['fax'] } };
    expect(() => registry.registerTool(contactTool(broken))).toThrow(ToolContractError);
    try {
      registry.registerTool(contactTool(broken));
    } catch (error) {
      expect((error as ToolContractError).code).toBe(ContractErrorCode.SCHEMA_PARAMETERS_INVALID);
      expect((error as ToolContractError).message).toContain(
        "parameters.then: required 'fax' is not among its properties",
      );
    }
  });

  it('refuses a 2020-12 keyword in a draft-07 schema, which would otherwise be ignored', () => {
    const registry = new AgentToolRegistry();
    const { $schema: _dialect, ...draft07 } = CONTACT;
    expect(() => registry.registerTool(contactTool(draft07))).toThrow(/unknown keyword '\$anchor'/);
  });
});
