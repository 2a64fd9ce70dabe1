import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { EchoTool, PlainTool } from '../test/fixtures/tools.js';
import { CapturingAdminLogger } from './admin-logger.js';
import { ContractErrorCode, ToolContractError } from './errors.js';
import { TOOL_NAME_MAX_LENGTH } from './contract-rules.js';
import { functionToolSchema } from './schema.js';
import { USAGE_METADATA_MAX_LENGTH } from './contract-rules.js';
import { AgentToolRegistry } from './tool-registry.js';

const Args = Type.Object({ text: Type.String({ description: 'Some text.' }) }, { additionalProperties: false });

/** A valid tool class, which each test below breaks in one way by overriding its statics. */
function validTool(name = 'test_valid', statics: Record<string, unknown> = {}) {
  const Tool = class ValidTool {
    static readonly ToolName: string = name;
    static readonly ToolUsageMetadata: string = 'Use it in tests.';
    static getSchema() {
      return functionToolSchema(name, 'A valid tool.', Args);
    }
    readonly name = name;
    readonly isToolFullyExecutedOnServer = true;
    async execute() {
      return { successful: true as const, result: '{}', errors: [] };
    }
  };
  for (const [key, value] of Object.entries(statics))
    Object.defineProperty(Tool, key, { value, configurable: true, writable: true });
  return Tool;
}

function registrationError(toolClass: unknown): ToolContractError {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  try {
    registry.registerTool(toolClass as never);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolContractError);
    expect(registry.size).toBe(0);
    // Every violation is logged before it is thrown.
    expect(logger.errors().map((entry) => entry.message)).toEqual(
      (error as ToolContractError).violations.map((v) => v.message),
    );
    return error as ToolContractError;
  }
  throw new Error('registerTool accepted a malformed tool');
}

describe('AgentToolRegistry.registerTool: the contract rules', () => {
  it('accepts a well-formed tool', () => {
    const registry = new AgentToolRegistry();
    const registered = registry.registerTool(EchoTool);
    expect(registered.name).toBe('test_echo');
    expect(registry.has('test_echo')).toBe(true);
  });

  it('refuses something that is not a class', () => {
    const error = registrationError(new (validTool())());
    expect(error.code).toBe(ContractErrorCode.NOT_A_CLASS);
    expect(error.message).toMatch(/pass the class itself/);
  });

  it('refuses a class without ToolName', () => {
    class NoName {
      static readonly ToolUsageMetadata = 'x';
      static getSchema() {
        return functionToolSchema('no_name', 'x', Args);
      }
      async execute() {}
    }
    const error = registrationError(NoName);
    expect(error.code).toBe(ContractErrorCode.TOOL_NAME_MISSING);
    expect(error.message).toContain('NoName');
    expect(error.message).toContain("static readonly ToolName = 'your_tool_name'");
  });

  it('refuses a ToolName declared as a getter', () => {
    const Tool = class GetterName extends validTool('getter_name') {};
    Object.defineProperty(Tool, 'ToolName', { get: () => 'getter_name' });
    expect(registrationError(Tool).code).toBe(ContractErrorCode.TOOL_NAME_NOT_DATA_PROPERTY);
  });

  it('refuses a ToolName only inherited from a base class', () => {
    class Inheriting extends validTool('base_tool') {}
    const error = registrationError(Inheriting);
    expect(error.code).toBe(ContractErrorCode.TOOL_NAME_NOT_DATA_PROPERTY);
    expect(error.message).toMatch(/inherited \("base_tool"\)/);
  });

  it('refuses an empty or non-string ToolName', () => {
    expect(registrationError(validTool('')).code).toBe(ContractErrorCode.TOOL_NAME_MISSING);
    const Numbered = validTool('x', { ToolName: 42 });
    expect(registrationError(Numbered).code).toBe(ContractErrorCode.TOOL_NAME_MISSING);
  });

  it.each([
    ['HelloWorld', 'hello_world'],
    ['hello-world', 'hello_world'],
    ['hello__world', 'hello_world'],
    ['_hello', 'hello'],
    ['hello world', 'hello_world'],
  ])('refuses the ToolName %s and suggests %s', (name, suggestion) => {
    const error = registrationError(validTool(name));
    expect(error.code).toBe(ContractErrorCode.TOOL_NAME_INVALID);
    expect(error.message).toContain(`"${suggestion}"`);
  });

  it("accepts a ToolName of exactly 64 characters, OpenAI's limit", () => {
    const name = `${'a'.repeat(62)}_b`;
    expect(name).toHaveLength(64);
    expect(new AgentToolRegistry().registerTool(validTool(name)).name).toBe(name);
    expect(TOOL_NAME_MAX_LENGTH).toBe(64);
  });

  it('refuses a ToolName over 64 characters', () => {
    const error = registrationError(validTool('a'.repeat(65)));
    expect(error.code).toBe(ContractErrorCode.TOOL_NAME_TOO_LONG);
    expect(error.message).toContain('65 characters');
  });

  it('refuses missing or empty ToolUsageMetadata', () => {
    const Empty = validTool('empty_usage', { ToolUsageMetadata: '   ' });
    expect(registrationError(Empty).code).toBe(ContractErrorCode.USAGE_METADATA_MISSING);
    class NoUsage {
      static readonly ToolName = 'no_usage';
      static getSchema() {
        return functionToolSchema('no_usage', 'x', Args);
      }
      async execute() {}
    }
    expect(registrationError(NoUsage).code).toBe(ContractErrorCode.USAGE_METADATA_MISSING);
  });

  it('refuses a usage guide past the size bound, naming the bound (a 20 MB guide would sit in every system prompt)', () => {
    const Huge = validTool('huge_usage', { ToolUsageMetadata: 'x'.repeat(20 * 1024 * 1024) });
    const error = registrationError(Huge);
    expect(error.code).toBe(ContractErrorCode.USAGE_METADATA_TOO_LARGE);
    expect(error.message).toContain(`at most ${USAGE_METADATA_MAX_LENGTH} are allowed`);
    expect(
      registrationError(validTool('big_usage', { ToolUsageMetadata: 'x'.repeat(USAGE_METADATA_MAX_LENGTH + 1) })).code,
    ).toBe(ContractErrorCode.USAGE_METADATA_TOO_LARGE);
    expect(
      new AgentToolRegistry().registerTool(
        validTool('edge_usage', { ToolUsageMetadata: 'x'.repeat(USAGE_METADATA_MAX_LENGTH) }),
      ).name,
    ).toBe('edge_usage');
  });

  it('refuses a class whose instances cannot execute', () => {
    class NoExecute {
      static readonly ToolName = 'no_execute';
      static readonly ToolUsageMetadata = 'x';
      static getSchema() {
        return functionToolSchema('no_execute', 'x', Args);
      }
    }
    expect(registrationError(NoExecute).code).toBe(ContractErrorCode.EXECUTE_MISSING);
  });

  it('refuses a missing getSchema, one taking parameters, and one that throws', () => {
    class NoSchema {
      static readonly ToolName = 'no_schema';
      static readonly ToolUsageMetadata = 'x';
      async execute() {}
    }
    expect(registrationError(NoSchema).code).toBe(ContractErrorCode.GET_SCHEMA_MISSING);
    const WithParams = validTool('with_params', {
      getSchema: (flavour?: string) => functionToolSchema(`with_params${flavour ?? ''}`, 'x', Args),
    });
    expect(registrationError(WithParams).code).toBe(ContractErrorCode.GET_SCHEMA_HAS_PARAMETERS);
    const Throws = validTool('throws_schema', {
      getSchema: () => {
        throw new Error('no schema today');
      },
    });
    const error = registrationError(Throws);
    expect(error.code).toBe(ContractErrorCode.GET_SCHEMA_THREW);
    expect(error.message).toContain('no schema today');
  });

  it('refuses a schema that is not the function-tool shape', () => {
    const Nested = validTool('nested_shape', {
      getSchema: () => ({ type: 'function', function: { name: 'nested_shape', description: 'x', parameters: Args } }),
    });
    const error = registrationError(Nested);
    expect(error.code).toBe(ContractErrorCode.SCHEMA_SHAPE_INVALID);
    expect(error.message).toContain("must have required property 'name'");
    const NoRequired = validTool('no_required', {
      getSchema: () => ({
        type: 'function',
        name: 'no_required',
        description: 'x',
        parameters: { type: 'object', properties: {} },
      }),
    });
    expect(registrationError(NoRequired).message).toContain("required property 'required'");
  });

  it('refuses an empty or blank description by saying to write one', () => {
    for (const description of ['', '   ']) {
      const error = registrationError(
        validTool('blank_description', { getSchema: () => functionToolSchema('blank_description', description, Args) }),
      );
      expect(error.code).toBe(ContractErrorCode.SCHEMA_SHAPE_INVALID);
      expect(error.message).toBe(
        'Tool "blank_description" (ValidTool) breaks the tool contract: getSchema() gives the tool no description, and models choose a tool by its description. ' +
          "Fix: write one sentence saying what the tool does, as functionToolSchema's second argument: functionToolSchema(ToolName, 'Converts a temperature between units.', Args).",
      );
    }
  });

  it('refuses a schema whose name differs from ToolName', () => {
    const Mismatch = validTool('real_name', { getSchema: () => functionToolSchema('other_name', 'x', Args) });
    const error = registrationError(Mismatch);
    expect(error.code).toBe(ContractErrorCode.SCHEMA_NAME_MISMATCH);
    expect(error.message).toContain('"other_name"');
    expect(error.message).toContain('"real_name"');
  });

  it('refuses parameters that are not valid JSON Schema under ajv strict rules', () => {
    const BadType = validTool('bad_type', {
      getSchema: () =>
        functionToolSchema('bad_type', 'x', {
          type: 'object',
          properties: { a: { type: 'strnig', description: 'a' } },
          required: [],
        }),
    });
    expect(registrationError(BadType).code).toBe(ContractErrorCode.SCHEMA_PARAMETERS_INVALID);
    const Unknown = validTool('unknown_keyword', {
      getSchema: () =>
        functionToolSchema('unknown_keyword', 'x', {
          type: 'object',
          properties: { a: { type: 'string', description: 'a', minLenght: 1 } },
          required: [],
        }),
    });
    const error = registrationError(Unknown);
    expect(error.code).toBe(ContractErrorCode.SCHEMA_PARAMETERS_INVALID);
    expect(error.message).toContain("unknown keyword 'minLenght'");
    const Ghost = validTool('ghost_required', {
      getSchema: () =>
        functionToolSchema('ghost_required', 'x', { type: 'object', properties: {}, required: ['ghost'] }),
    });
    expect(registrationError(Ghost).message).toContain("required 'ghost' is not among its properties");
  });

  it('refuses a parameter without a simple type or without a description', () => {
    const Untyped = validTool('untyped_param', {
      getSchema: () =>
        functionToolSchema('untyped_param', 'x', {
          type: 'object',
          properties: { a: { description: 'anything' } },
          required: [],
        }),
    });
    const untyped = registrationError(Untyped);
    expect(untyped.code).toBe(ContractErrorCode.SCHEMA_PROPERTY_TYPE_MISSING);
    expect(untyped.message).toContain("parameter 'a'");
    const Undescribed = validTool('undescribed_param', {
      getSchema: () => functionToolSchema('undescribed_param', 'x', Type.Object({ a: Type.String() })),
    });
    const undescribed = registrationError(Undescribed);
    expect(undescribed.code).toBe(ContractErrorCode.SCHEMA_PROPERTY_DESCRIPTION_MISSING);
    expect(undescribed.message).toContain("parameter 'a' has no description");
  });

  it('refuses a schema that changes between calls', () => {
    let calls = 0;
    const Drifting = validTool('drifting', {
      getSchema: () => {
        calls++;
        return functionToolSchema('drifting', `Generated at call ${calls}.`, Args);
      },
    });
    expect(registrationError(Drifting).code).toBe(ContractErrorCode.SCHEMA_NOT_DETERMINISTIC);
  });

  it('refuses an invalid TimeoutMs', () => {
    const Slow = validTool('bad_timeout', { TimeoutMs: -5 });
    expect(registrationError(Slow).code).toBe(ContractErrorCode.TIMEOUT_INVALID);
  });

  it("refuses a TaskSupport other than 'optional' or 'required', and registers the declared one", () => {
    for (const odd of ['always', 'Optional', true, 1]) {
      expect(registrationError(validTool('bad_tasks', { TaskSupport: odd })).code).toBe(
        ContractErrorCode.TASK_SUPPORT_INVALID,
      );
    }
    const registry = new AgentToolRegistry();
    registry.registerTools([validTool('long_job', { TaskSupport: 'required' }), validTool('quick_job')]);
    expect([registry.get('long_job')?.taskSupport, registry.get('quick_job')?.taskSupport]).toEqual([
      'required',
      'forbidden',
    ]);
  });

  it('refuses a ReleasesSignal that is not a boolean, and registers the declared one', () => {
    for (const odd of ['yes', 1, null, {}]) {
      const error = registrationError(validTool('bad_release', { ReleasesSignal: odd }));
      expect(error.code).toBe(ContractErrorCode.RELEASES_SIGNAL_INVALID);
      expect(error.message).toContain('ReleasesSignal must be true or false');
    }
    const registry = new AgentToolRegistry();
    registry.registerTools([validTool('lets_go', { ReleasesSignal: true }), validTool('holds_on')]);
    expect([registry.get('lets_go')?.releasesSignal, registry.get('holds_on')?.releasesSignal]).toEqual([true, false]);
  });

  it("refuses a TaskInput other than 'before' or 'during', or one without TaskSupport, and registers the declared one", () => {
    for (const odd of ['first', 'Before', true, 1]) {
      expect(registrationError(validTool('bad_task_input', { TaskSupport: 'optional', TaskInput: odd })).code).toBe(
        ContractErrorCode.TASK_SUPPORT_INVALID,
      );
    }
    const alone = registrationError(validTool('lonely_input', { TaskInput: 'before' }));
    expect(alone.code).toBe(ContractErrorCode.TASK_SUPPORT_INVALID);
    expect(alone.message).toContain('TaskSupport is not');
    const registry = new AgentToolRegistry();
    registry.registerTools([
      validTool('asks_first', { TaskSupport: 'required', TaskInput: 'before' }),
      validTool('long_job', { TaskSupport: 'optional' }),
    ]);
    expect([registry.get('asks_first')?.taskInput, registry.get('long_job')?.taskInput]).toEqual(['before', 'during']);
  });

  it('reports every violation of a class, not only the first', () => {
    class Broken {
      static readonly ToolName = 'Broken-Tool';
      static getSchema() {
        return functionToolSchema('Broken-Tool', 'x', Args);
      }
    }
    const error = registrationError(Broken);
    expect(error.violations.map((v) => v.code)).toEqual([
      ContractErrorCode.TOOL_NAME_INVALID,
      ContractErrorCode.USAGE_METADATA_MISSING,
      ContractErrorCode.EXECUTE_MISSING,
    ]);
  });

  it('refuses a duplicate name, case-insensitively, with "Tool already exists" and a free name', () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(validTool('test_echo_v2'));
    registry.registerTool(EchoTool);
    const Again = validTool('test_echo');
    let caught: unknown;
    try {
      registry.registerTool(Again);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ToolContractError);
    expect((caught as ToolContractError).code).toBe(ContractErrorCode.DUPLICATE_TOOL);
    expect((caught as ToolContractError).message).toMatch(/^Tool already exists: "test_echo"/);
    expect((caught as ToolContractError).message).toContain('"test_echo_v3"');
    expect(registry.size).toBe(2);
  });

  it('treats names differing only in case as duplicates', () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(validTool('same_name'));
    const upper = validTool('same_name', { ToolName: 'SAME_NAME' });
    expect(() => registry.registerTool(upper)).toThrow(ToolContractError);
  });
});

describe('AgentToolRegistry: lookup, listing and definitions', () => {
  it('gets, lists and unregisters tools in registration order', () => {
    const registry = new AgentToolRegistry();
    registry.registerTools([EchoTool, PlainTool]);
    expect(registry.names()).toEqual(['test_echo', 'test_plain']);
    expect(registry.get('test_plain')?.toolClass).toBe(PlainTool);
    const [echo] = registry.list();
    expect(echo).toMatchObject({
      name: 'test_echo',
      description: 'Echoes the text it is given.',
      usageMetadata: expect.stringContaining('Primary purpose'),
    });
    expect(echo!.parameters).toMatchObject({ type: 'object', required: ['text'] });
    expect(registry.unregister('test_echo')).toBe(true);
    expect(registry.unregister('test_echo')).toBe(false);
    expect(registry.names()).toEqual(['test_plain']);
  });

  it('gives the Responses format flat and the Chat Completions format nested, with strict explicit', () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(EchoTool);
    const [responses] = registry.definitions('responses');
    const [chat] = registry.definitions('chat');
    expect(responses).toMatchObject({
      type: 'function',
      name: 'test_echo',
      description: 'Echoes the text it is given.',
      strict: true,
    });
    expect(chat).toMatchObject({
      type: 'function',
      function: { name: 'test_echo', description: 'Echoes the text it is given.', strict: true },
    });
    expect(chat!.function.parameters).toEqual(responses!.parameters);
  });

  it('derives the strict view: optional properties become required and nullable, length limits stay on the server', () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(EchoTool);
    const [definition] = registry.definitions('responses');
    expect(definition!.parameters).toEqual({
      type: 'object',
      properties: {
        text: { type: 'string', description: 'Text to echo back.' },
        times: { type: ['integer', 'null'], minimum: 1, maximum: 3, description: 'How many times to repeat it.' },
      },
      required: ['text', 'times'],
      additionalProperties: false,
    });
    // MCP gets the schema as declared.
    expect(registry.definitions('mcp')[0]!.inputSchema).toMatchObject({
      required: ['text'],
      properties: { text: { minLength: 1 } },
    });
  });

  it('sets strict false when the schema cannot be strict, or when the tool says so', () => {
    const Open = validTool('open_object', {
      getSchema: () =>
        functionToolSchema(
          'open_object',
          'x',
          Type.Object({ tags: Type.Record(Type.String(), Type.String(), { description: 'Free-form tags.' }) }),
        ),
    });
    const OptOut = validTool('opt_out', {
      getSchema: () => functionToolSchema('opt_out', 'x', Args, { strict: false }),
    });
    const registry = new AgentToolRegistry();
    registry.registerTools([Open, OptOut]);
    expect(registry.definitions('responses').map((d) => d.strict)).toEqual([false, false]);
    expect(registry.get('open_object')!.strictView.problems.join(' ')).toMatch(/open objects|patternProperties/);
    expect(registry.definitions('responses')[1]!.parameters).toEqual(registry.get('opt_out')!.parameters);
  });

  it('caches definitions and invalidates the cache on register and unregister', () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(EchoTool);
    const first = registry.definitions('responses');
    expect(registry.definitions('responses')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    registry.registerTool(PlainTool);
    const second = registry.definitions('responses');
    expect(second).not.toBe(first);
    expect(second.map((d) => d.name)).toEqual(['test_echo', 'test_plain']);
    registry.unregister('test_echo');
    expect(registry.definitions('responses').map((d) => d.name)).toEqual(['test_plain']);
  });

  it('counts every change in its revision, so a tool replaced under the same name after start-up is seen', () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(EchoTool);
    const before = registry.revision;
    const listed = registry.definitions('mcp', ['test_echo']);
    registry.unregister('test_echo');
    registry.registerTool(EchoTool);
    expect(registry.size).toBe(1);
    expect(registry.revision).toBe(before + 2);
    expect(registry.definitions('mcp', ['test_echo'])).not.toBe(listed);
    // A refused registration changes nothing.
    expect(() => registry.registerTool(EchoTool)).toThrow(ToolContractError);
    expect(registry.revision).toBe(before + 2);
    expect(registry.unregister('nope')).toBe(false);
    expect(registry.revision).toBe(before + 2);
  });

  it('gives a subset in the order asked, and refuses an unknown name', () => {
    const registry = new AgentToolRegistry();
    registry.registerTools([EchoTool, PlainTool]);
    expect(registry.definitions('chat', ['test_plain', 'test_echo']).map((d) => d.function.name)).toEqual([
      'test_plain',
      'test_echo',
    ]);
    expect(() => registry.definitions('chat', ['nope'])).toThrow(/No tool named "nope".*test_echo, test_plain/);
  });

  it('carries MCP annotations declared by the tool', () => {
    const ReadOnly = validTool('read_only', { ToolAnnotations: { readOnlyHint: true, idempotentHint: true } });
    const registry = new AgentToolRegistry();
    registry.registerTool(ReadOnly);
    expect(registry.definitions('mcp')[0]!.annotations).toEqual({ readOnlyHint: true, idempotentHint: true });
  });
});
