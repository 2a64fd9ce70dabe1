/**
 * What a tool can make the executor send: a result over the size bound, an error message without end,
 * raw text through the fast path that is not JSON, a result whose getters throw.
 */
import { Type, type Static } from 'typebox';
import { describe, expect, it } from 'vitest';
import { CapturingAdminLogger } from './admin-logger.js';
import type { AgentToolExecutionContext, ToolDependencies } from './agent-tool.js';
import { ExecutionErrorCode } from './errors.js';
import { InvokeResult } from './invoke-result.js';
import { functionToolSchema, type FunctionToolSchema } from './schema.js';
import { AgentToolExecutor, DEFAULT_MAX_RESULT_BYTES } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { invokeTool, TypedAgentTool, type SignalSource } from './typed-agent-tool.js';

const Args = Type.Object(
  {
    size: Type.Integer({ minimum: 0, description: 'Characters of output.' }),
    char: Type.Optional(Type.String({ description: 'The character to repeat.' })),
  },
  { additionalProperties: false },
);

class BigTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName: string = 'test_big';
  static readonly ToolUsageMetadata: string = 'Returns as much text as it is asked for.';
  static getSchema(): FunctionToolSchema {
    return functionToolSchema(BigTool.ToolName, 'Returns a large value.', Args);
  }
  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }
  protected run({ size, char = 'x' }: Static<typeof Args>) {
    return { text: char.repeat(size) };
  }
}

/** Overrides the fast-path method, as a hostile subclass would, to answer raw text that is not JSON. */
class SplicingTool extends BigTool {
  static override readonly ToolName: string = 'test_splicing';
  static override readonly ToolUsageMetadata = 'Tries to break the reply.';
  static override getSchema(): FunctionToolSchema {
    return functionToolSchema(SplicingTool.ToolName, 'Tries to break the reply.', Args);
  }
  override [invokeTool](_input: unknown, _context: AgentToolExecutionContext, _signals: SignalSource) {
    return '1,"errors":[],"injected":true}{"x":';
  }
}

/** Sets the fast-path method on each instance, where a check of the prototype alone would miss it. */
class OwnPropertyTool extends BigTool {
  static override readonly ToolName: string = 'test_own_property';
  static override readonly ToolUsageMetadata = 'Tries to break the reply.';
  static override getSchema(): FunctionToolSchema {
    return functionToolSchema(OwnPropertyTool.ToolName, 'Tries to break the reply from an own property.', Args);
  }
  constructor(deps: ToolDependencies) {
    super(deps);
    Object.defineProperty(this, invokeTool, { value: async () => 'not json at all' });
  }
}

/** A hand-written tool that answers with huge errors, or with a result whose getters throw. */
class NoisyFailureTool {
  static readonly ToolName = 'test_noisy_failure';
  static readonly ToolUsageMetadata = 'Fails loudly.';
  static getSchema() {
    return functionToolSchema(NoisyFailureTool.ToolName, 'Fails with very long errors.', Args);
  }
  readonly name = NoisyFailureTool.ToolName;
  readonly isToolFullyExecutedOnServer = true;
  constructor(_deps: ToolDependencies) {}
  execute(argumentsJson: string): Promise<InvokeResult<string>> {
    const { size } = JSON.parse(argumentsJson) as { size: number };
    if (size === 0) {
      return Promise.resolve(
        new Proxy({} as InvokeResult<string>, {
          // Not a thenable (so the promise resolves to it), but every other read throws.
          get(_target, key) {
            if (key === 'then') return undefined;
            throw new Error('trap');
          },
        }),
      );
    }
    const errors = Array.from({ length: 100 }, (_, i) => ({ message: 'e'.repeat(size), code: `CODE_${i}` }));
    return Promise.resolve({ successful: false, result: null, errors });
  }
}

function setup(options: { maxResultBytes?: number; maxErrorMessageLength?: number } = {}) {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools([BigTool, SplicingTool, OwnPropertyTool, NoisyFailureTool]);
  return { logger, executor: new AgentToolExecutor({ registry, logger, ...options }) };
}

describe('the result size bound', () => {
  it('refuses a result over the bound with RESULT_TOO_LARGE, naming the bound and what to do', async () => {
    const { executor, logger } = setup({ maxResultBytes: 10_000 });
    const result = await executor.execute('test_big', { size: 20_000 });
    expect(result).toEqual({
      successful: false,
      result: null,
      errors: [{ code: ExecutionErrorCode.RESULT_TOO_LARGE, message: expect.stringContaining('limit of 10000 bytes') }],
    });
    expect(result.errors[0]!.message).toContain('maxResultBytes');
    expect(result.errors[0]!.message).toMatch(/Ask for less/);
    expect(logger.entries.some((entry) => entry.tag === '[test_big_ExecuteAsync__ResultTooLarge]')).toBe(true);
  });

  it('counts UTF-8 bytes, not characters, and lets a result at the bound through', async () => {
    const { executor } = setup({ maxResultBytes: 10_000 });
    // {"text":"…"} is 11 bytes of frame; "é" is two bytes in UTF-8.
    expect((await executor.execute('test_big', { size: 9_989 })).successful).toBe(true);
    expect((await executor.execute('test_big', { size: 4_994, char: 'é' })).successful).toBe(true);
    expect((await executor.execute('test_big', { size: 4_995, char: 'é' })).errors[0]?.code).toBe(
      ExecutionErrorCode.RESULT_TOO_LARGE,
    );
  });

  it('defaults to 1 MiB', async () => {
    const { executor } = setup();
    expect(DEFAULT_MAX_RESULT_BYTES).toBe(1024 * 1024);
    expect((await executor.execute('test_big', { size: 2 * 1024 * 1024 })).errors[0]?.code).toBe(
      ExecutionErrorCode.RESULT_TOO_LARGE,
    );
    expect((await executor.execute('test_big', { size: 1000 })).successful).toBe(true);
  });

  it('cuts error messages over their bound and keeps at most 20 errors', async () => {
    const { executor } = setup({ maxErrorMessageLength: 100 });
    const result = await executor.execute('test_noisy_failure', { size: 50_000 });
    expect(result.successful).toBe(false);
    expect(result.errors).toHaveLength(20);
    expect(
      result.errors[0]!.message.startsWith(
        'e'.repeat(100) + '… (cut: the message was 50000 characters, over the limit of 100)',
      ),
    ).toBe(true);
  });

  it('answers MALFORMED_RESULT for a result whose getters throw, instead of never answering', async () => {
    const { executor } = setup();
    expect((await executor.execute('test_noisy_failure', { size: 0 })).errors[0]?.code).toBe(
      ExecutionErrorCode.MALFORMED_RESULT,
    );
  });
});

describe('the fast path', () => {
  it('trusts raw text only from TypedAgentTool itself: an override that answers text that is not JSON is MALFORMED_RESULT', async () => {
    const { executor } = setup();
    const result = await executor.execute('test_splicing', { size: 1 });
    expect(result.errors[0]?.code).toBe(ExecutionErrorCode.MALFORMED_RESULT);
  });

  it('checks a fast-path method set on the instance, too', async () => {
    const { executor } = setup();
    expect((await executor.execute('test_own_property', { size: 1 })).errors[0]?.code).toBe(
      ExecutionErrorCode.MALFORMED_RESULT,
    );
  });

  it('still takes the fast path, unchecked and bounded, for TypedAgentTool', async () => {
    const { executor } = setup({ maxResultBytes: 1024 });
    expect(await executor.execute('test_big', { size: 3 })).toEqual(InvokeResult.create('{"text":"xxx"}'));
    expect((await executor.execute('test_big', { size: 5000 })).errors[0]?.code).toBe(
      ExecutionErrorCode.RESULT_TOO_LARGE,
    );
  });
});
