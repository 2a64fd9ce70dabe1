import { Type, type Static } from 'typebox';
import { describe, expect, it } from 'vitest';
import { EchoTool, PlainTool } from '../test/fixtures/tools.js';
import { CapturingAdminLogger } from './admin-logger.js';
import type { AgentTool, AgentToolExecutionContext, ToolDependencies } from './agent-tool.js';
import { decodeArguments, type DecodedArguments } from './arguments.js';
import { ExecutionErrorCode } from './errors.js';
import type { InvokeResult } from './invoke-result.js';
import { functionToolSchema, type JsonSchema } from './schema.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool } from './typed-agent-tool.js';

// ExecuteOptions.argumentsValidated: a caller that validated the arguments against the tool's
// registered parameters (the host's approval gate) hands the object on, and it is not checked again
// where that is safe; everywhere else the tool's own checks still run.

const Args = Type.Object(
  { text: Type.String({ minLength: 1, description: 'Text.' }) },
  { additionalProperties: false },
);

/** Validates with its own decode first: a rule of its own that the registered schema cannot say. */
class ShoutTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'test_shout';
  static readonly ToolUsageMetadata = 'Shouts.';
  static getSchema() {
    return functionToolSchema(ShoutTool.ToolName, 'Shouts the text.', Args);
  }
  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }
  protected override decode(input: unknown, context: AgentToolExecutionContext): DecodedArguments<Static<typeof Args>> {
    const decoded = super.decode(input, context);
    if (decoded.ok && decoded.value.text.toLowerCase() === decoded.value.text)
      return { ok: false, message: 'Invalid arguments for test_shout: text must hold a capital letter.', issues: [] };
    return decoded;
  }
  protected run({ text }: Static<typeof Args>) {
    return { shout: text.toUpperCase() };
  }
}

const Strict = Type.Object(
  { text: Type.String({ maxLength: 3, description: 'Text.' }) },
  { additionalProperties: false },
);

/** Declares a looser schema than the one it validates with: its own schema still decides. */
class NarrowTool extends TypedAgentTool<typeof Strict> {
  static readonly ToolName = 'test_narrow';
  static readonly ToolUsageMetadata = 'Narrow.';
  static getSchema() {
    return functionToolSchema(NarrowTool.ToolName, 'Takes short text.', Args);
  }
  constructor({ logger }: ToolDependencies) {
    super(Strict, logger);
  }
  protected run({ text }: Static<typeof Strict>) {
    return { text };
  }
}

function setup() {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools([EchoTool, PlainTool, ShoutTool, NarrowTool]);
  let plain: PlainTool | undefined;
  const executor = new AgentToolExecutor({
    registry,
    logger,
    createTool: (toolClass, _context, callLogger) => {
      const tool = new toolClass({ logger: callLogger }) as AgentTool;
      if (tool instanceof PlainTool) plain = tool;
      return tool;
    },
  });
  /** Validates like the approval gate does: against the registered parameters. */
  const validated = (name: string, args: unknown): object => {
    const decoded = decodeArguments<object>(name, registry.get(name)!.parameters as JsonSchema, args);
    if (!decoded.ok) throw new Error(decoded.message);
    return decoded.value;
  };
  return { executor, validated, plain: () => plain };
}

function payload(result: InvokeResult<string>): unknown {
  expect(result.successful, JSON.stringify(result)).toBe(true);
  return JSON.parse(result.result as string);
}

describe('AgentToolExecutor.execute with argumentsValidated', () => {
  it('runs a TypedAgentTool on the validated object, nulls for optional arguments already dropped', async () => {
    const { executor, validated } = setup();
    const args = validated('test_echo', '{"text":"hi","times":null}');
    expect(payload(await executor.execute('test_echo', args, {}, { argumentsValidated: true }))).toMatchObject({
      echo: 'hi',
    });
  });

  it("takes the caller's word: the object is not checked again against the same schema", async () => {
    // What the caller promises is what it gets: an object it did not validate is the caller's fault.
    const { executor } = setup();
    expect(
      payload(
        await executor.execute(
          'test_echo',
          { text: 'unchecked', times: 1, extra: true },
          {},
          { argumentsValidated: true },
        ),
      ),
    ).toMatchObject({ echo: 'unchecked' });
    // Without the promise, the same object is refused.
    const refused = await executor.execute('test_echo', { text: 'unchecked', times: 1, extra: true }, {});
    expect(refused.errors[0]?.code).toBe(ExecutionErrorCode.INVALID_ARGUMENTS);
  });

  it("still runs a tool's own decode when the tool overrides it", async () => {
    const { executor, validated } = setup();
    const result = await executor.execute(
      'test_shout',
      validated('test_shout', { text: 'quiet' }),
      {},
      { argumentsValidated: true },
    );
    expect(result.errors[0]).toMatchObject({
      code: ExecutionErrorCode.INVALID_ARGUMENTS,
      message: expect.stringContaining('capital letter'),
    });
    expect(
      payload(
        await executor.execute(
          'test_shout',
          validated('test_shout', { text: 'Loud' }),
          {},
          { argumentsValidated: true },
        ),
      ),
    ).toEqual({ shout: 'LOUD' });
  });

  it("still checks with the tool's own schema when it differs from the registered one", async () => {
    const { executor, validated } = setup();
    const result = await executor.execute(
      'test_narrow',
      validated('test_narrow', { text: 'too long' }),
      {},
      { argumentsValidated: true },
    );
    expect(result.errors[0]).toMatchObject({
      code: ExecutionErrorCode.INVALID_ARGUMENTS,
      message: expect.stringContaining("'text' must NOT have more than 3 characters"),
    });
    expect(
      payload(
        await executor.execute(
          'test_narrow',
          validated('test_narrow', { text: 'ok' }),
          {},
          { argumentsValidated: true },
        ),
      ),
    ).toEqual({ text: 'ok' });
  });

  it('checks JSON text as usual: only an object can be the validated value', async () => {
    const { executor } = setup();
    const result = await executor.execute('test_echo', '{"times":2}', {}, { argumentsValidated: true });
    expect(result.errors[0]).toMatchObject({
      code: ExecutionErrorCode.INVALID_ARGUMENTS,
      message: expect.stringContaining("'text' is required"),
    });
  });

  it('hands a tool that implements execute itself the validated object as JSON text', async () => {
    const { executor, validated, plain } = setup();
    const result = await executor.execute(
      'test_plain',
      validated('test_plain', { behaviour: 'ok', note: 'n' }),
      {},
      { argumentsValidated: true },
    );
    expect(result.successful).toBe(true);
    expect(JSON.parse(plain()!.lastArguments!)).toEqual({ behaviour: 'ok', note: 'n' });
  });
});
