import { describe, expect, it } from 'vitest';
import { EchoTool, PlainTool, SleepTool, StubbornTool, ThrowingTool } from '../test/fixtures/tools.js';
import { CapturingAdminLogger } from './admin-logger.js';
import type { AgentTool } from './agent-tool.js';
import { ExecutionErrorCode } from './errors.js';
import type { InvokeResult } from './invoke-result.js';
import { testContext } from './testing/index.js';
import { AgentToolExecutor, type ToolFactory } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';

function setup(options: { createTool?: ToolFactory } = {}) {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools([EchoTool, PlainTool, SleepTool, StubbornTool, ThrowingTool]);
  // A short grace period: StubbornTool never settles, so its time-outs end when the grace period does.
  const executor = new AgentToolExecutor({ registry, logger, cancelGraceMs: 5, ...options });
  return { logger, registry, executor };
}

function parsed(result: InvokeResult<string>): Record<string, unknown> {
  expect(result.successful).toBe(true);
  return JSON.parse(result.result as string) as Record<string, unknown>;
}

function failure(result: InvokeResult<string>): { message: string; code?: string } {
  expect(result.successful).toBe(false);
  expect(result.result).toBeNull();
  expect(result.errors.length).toBeGreaterThan(0);
  return result.errors[0]!;
}

const context = testContext({ sessionId: 'session-1', conversationId: 'conversation-1' });

describe('AgentToolExecutor', () => {
  it('runs a tool and returns its JSON result with the session and conversation ids', async () => {
    const { executor } = setup();
    const result = await executor.execute('test_echo', '{"text":"hi","times":2}', context);
    expect(parsed(result)).toEqual({ echo: 'hi hi', sessionId: 'session-1', conversationId: 'conversation-1' });
  });

  it('accepts arguments already parsed, as an HTTP body arrives', async () => {
    const { executor } = setup();
    expect(parsed(await executor.execute('test_echo', { text: 'obj' }, context))).toMatchObject({ echo: 'obj' });
  });

  it('returns TOOL_NOT_FOUND, listing the tools, for an unknown name', async () => {
    const { executor } = setup();
    const error = failure(await executor.execute('no_such_tool', '{}', context));
    expect(error.code).toBe(ExecutionErrorCode.TOOL_NOT_FOUND);
    expect(error.message).toContain('"no_such_tool"');
    expect(error.message).toContain('test_echo');
  });

  it('names every offending field, what it expected and what it got', async () => {
    const { executor } = setup();
    const error = failure(await executor.execute('test_echo', '{"times":"many","extra":1}', context));
    expect(error.code).toBe(ExecutionErrorCode.INVALID_ARGUMENTS);
    expect(error.message).toContain("'text' is required but was not sent");
    expect(error.message).toContain('\'times\' must be integer, got string "many"');
    expect(error.message).toContain("'extra' is not an argument of this tool (its arguments: text, times)");
  });

  it('says a number too large for JSON is not finite', async () => {
    const { executor } = setup();
    expect(failure(await executor.execute('test_echo', '{"text":"x","times":1e400}', context)).message).toContain(
      "'times' must be a finite integer, got Infinity",
    );
  });

  it('reports bounds with the value received', async () => {
    const { executor } = setup();
    const error = failure(await executor.execute('test_echo', '{"text":"x","times":9}', context));
    expect(error.message).toBe("Invalid arguments for test_echo: 'times' must be <= 3, got number 9.");
  });

  it.each([
    ['', /no arguments were sent/],
    ['   ', /no arguments were sent/],
    ['{"text":', /not valid JSON/],
    ['[1,2]', /must be a JSON object, got an array of 2/],
    ['"text"', /must be a JSON object, got string "text"/],
    ['{"__proto__":{"polluted":true},"text":"x"}', /forbidden key/],
    ['{"constructor":{"prototype":{"polluted":true}},"text":"x"}', /forbidden key/],
  ])('refuses the arguments %j without running the tool', async (args, message) => {
    const { executor } = setup();
    const error = failure(await executor.execute('test_echo', args, context));
    expect(error.code).toBe(ExecutionErrorCode.INVALID_ARGUMENTS);
    expect(error.message).toMatch(message);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses prototype keys in an object built elsewhere', async () => {
    const { executor } = setup();
    const body = JSON.parse('{"text":"x","__proto__":{"polluted":true}}') as object;
    expect(failure(await executor.execute('test_echo', body, context)).message).toMatch(/forbidden key/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('drops a null sent for an optional property, as strict mode sends it', async () => {
    const { executor } = setup();
    expect(parsed(await executor.execute('test_echo', '{"text":"once","times":null}', context))).toMatchObject({
      echo: 'once',
    });
    // A null for a required property is still an error.
    expect(failure(await executor.execute('test_echo', '{"text":null}', context)).message).toContain(
      "'text' must be string, got null",
    );
  });

  it('validates plain tools against their schema, then hands them clean JSON', async () => {
    let tool: PlainTool | undefined;
    const { executor } = setup({
      createTool: (toolClass) => {
        const instance = new toolClass({ logger: new CapturingAdminLogger() });
        if (instance instanceof PlainTool) tool = instance;
        return instance;
      },
    });
    expect(failure(await executor.execute('test_plain', '{"behaviour":"fly"}', context)).message).toContain(
      "'behaviour' must be one of",
    );
    expect(tool).toBeUndefined();
    expect(parsed(await executor.execute('test_plain', '{"behaviour":"ok","note":null}', context))).toMatchObject({
      ok: true,
    });
    expect(tool!.lastArguments).toBe('{"behaviour":"ok"}');
  });

  it('turns a thrown exception into a generic failure, logged, with no stack or secret', async () => {
    const { executor, logger } = setup();
    const result = await executor.execute('test_throwing', '{}', context);
    const error = failure(result);
    expect(error).toEqual({
      message: 'test_throwing failed to process arguments.',
      code: ExecutionErrorCode.TOOL_EXCEPTION,
    });
    expect(JSON.stringify(result)).not.toMatch(/hunter2|\bat secret|\.js:/);
    const [logged] = logger.exceptions();
    expect(logged!.tag).toBe('[test_throwing_ExecuteAsync__Exception]');
    expect(logged!.pairs).toEqual([
      ['SessionId', 'session-1'],
      ['ConversationId', 'conversation-1'],
    ]);
  });

  it.each(['throw', 'reject'])('survives a plain tool that %ss', async (behaviour) => {
    const { executor, logger } = setup();
    const error = failure(await executor.execute('test_plain', { behaviour }, context));
    expect(error.code).toBe(ExecutionErrorCode.TOOL_EXCEPTION);
    expect(logger.exceptions()[0]!.tag).toBe('[test_plain_ExecuteAsync__Exception]');
  });

  it('turns a successful result that is not JSON into MALFORMED_RESULT (AGN-005 §9)', async () => {
    const { executor } = setup();
    const result = await executor.execute('test_plain', { behaviour: 'not-json' }, context);
    expect(failure(result)).toEqual({
      message: 'test_plain returned a result that is not valid JSON.',
      code: ExecutionErrorCode.MALFORMED_RESULT,
    });
    expect(JSON.stringify(result)).not.toContain('this is not');
  });

  it.each(['shape', 'non-string'])('turns a malformed result (%s) into MALFORMED_RESULT', async (behaviour) => {
    const { executor } = setup();
    expect(failure(await executor.execute('test_plain', { behaviour }, context)).code).toBe(
      ExecutionErrorCode.MALFORMED_RESULT,
    );
  });

  it('cuts stack traces out of the messages of failed results', async () => {
    const { executor } = setup();
    expect(failure(await executor.execute('test_plain', { behaviour: 'error-with-stack' }, context))).toEqual({
      message: 'bad things',
      code: 'BAD',
    });
  });

  it('accepts results built by another copy of the contract, recognised by shape', async () => {
    class Foreign {
      static readonly ToolName = 'foreign_tool';
      static readonly ToolUsageMetadata = 'From another copy.';
      static getSchema() {
        return {
          type: 'function' as const,
          name: 'foreign_tool',
          description: 'x',
          parameters: { type: 'object' as const, properties: {}, required: [] },
        };
      }
      readonly name = 'foreign_tool';
      readonly isToolFullyExecutedOnServer = true;
      async execute() {
        return Object.assign(Object.create({ copy: 2 }) as object, {
          successful: true,
          result: '{"from":"elsewhere"}',
          errors: [],
        }) as InvokeResult<string>;
      }
    }
    const { executor, registry } = setup();
    registry.registerTool(Foreign);
    expect(parsed(await executor.execute('foreign_tool', '{}', context))).toEqual({ from: 'elsewhere' });
  });

  it("times out at the tool's own limit with TIMEOUT, aborting its signal", async () => {
    const { executor, logger } = setup();
    const error = failure(await executor.execute('test_sleep', '{}', context));
    expect(error.code).toBe(ExecutionErrorCode.TIMEOUT);
    expect(error.message).toContain('within 50 ms');
    expect(logger.errors()[0]!.tag).toBe('[test_sleep_ExecuteAsync__Timeout]');
  });

  it('lets a call override the time-out', async () => {
    const { executor } = setup();
    expect(failure(await executor.execute('test_stubborn', '{}', context, { timeoutMs: 20 })).message).toContain(
      'within 20 ms',
    );
  });

  it('uses the executor default time-out when neither the call nor the tool sets one', async () => {
    const logger = new CapturingAdminLogger();
    const registry = new AgentToolRegistry();
    registry.registerTool(StubbornTool);
    const executor = new AgentToolExecutor({ registry, logger, defaultTimeoutMs: 15, cancelGraceMs: 5 });
    expect(failure(await executor.execute('test_stubborn', '{}', context)).message).toContain('within 15 ms');
  });

  it("passes on the tool's own description of a cancellation by the caller", async () => {
    const { executor } = setup();
    const controller = new AbortController();
    const pending = executor.execute('test_sleep', '{}', context, { signal: controller.signal, timeoutMs: 5_000 });
    setTimeout(() => controller.abort(), 5);
    expect(parsed(await pending)).toEqual({ wasCancelled: true, by: 'tool' });
  });

  it('defaults to the 30 s time-out of Story 6.1 when neither the call nor the tool sets one', () => {
    const registry = new AgentToolRegistry();
    registry.registerTools([StubbornTool, SleepTool]);
    const executor = new AgentToolExecutor({ registry });
    expect(executor.defaultTimeoutMs).toBe(30_000);
    expect(executor.timeoutOf('test_stubborn')).toBe(30_000);
    // The tool's own limit, then the call's, come first.
    expect(executor.timeoutOf('test_sleep')).toBe(50);
    expect(executor.timeoutOf('test_sleep', 7)).toBe(7);
  });

  it('does not start a call whose signal is already aborted', async () => {
    let created = 0;
    const { executor } = setup({
      createTool: (toolClass) => {
        created++;
        return new toolClass({ logger: new CapturingAdminLogger() });
      },
    });
    expect(
      parsed(await executor.execute('test_echo', '{"text":"x"}', context, { signal: AbortSignal.abort() })),
    ).toMatchObject({ wasCancelled: true, elapsedMs: 0 });
    expect(created).toBe(0);
  });

  it('fails cleanly with TOOL_UNAVAILABLE when the host cannot build the tool', async () => {
    const { executor, logger } = setup({
      createTool: () => {
        throw new Error('Could not resolve sessionManager');
      },
    });
    const error = failure(await executor.execute('test_echo', '{"text":"x"}', context));
    expect(error.code).toBe(ExecutionErrorCode.TOOL_UNAVAILABLE);
    expect(error.message).not.toContain('sessionManager');
    expect(logger.exceptions()[0]!.tag).toBe('[test_echo_CreateTool__Exception]');
  });

  it("sends a call's lines to the call's own logger: the tool's, the executor's, and a time-out's", async () => {
    const { executor, logger } = setup();
    const call = new CapturingAdminLogger();
    await executor.execute('test_throwing', '{}', context, { logger: call });
    await executor.execute('test_plain', { behaviour: 'throw' }, context, { logger: call });
    await executor.execute('test_plain', { behaviour: 'not-json' }, context, { logger: call });
    await executor.execute('test_sleep', '{}', context, { logger: call, timeoutMs: 20 });
    expect(call.entries.map((entry) => entry.tag)).toEqual([
      '[test_throwing_ExecuteAsync__Exception]',
      '[test_plain_ExecuteAsync__Exception]',
      '[test_plain_ExecuteAsync__MalformedResult]',
      '[test_sleep_ExecuteAsync__Timeout]',
    ]);
    expect(logger.entries).toEqual([]);
  });

  it("hands the call's logger to the tool factory", async () => {
    const given: unknown[] = [];
    const { executor } = setup({
      createTool: (toolClass, _context, logger) => {
        given.push(logger);
        return new toolClass({ logger });
      },
    });
    const call = new CapturingAdminLogger();
    await executor.execute('test_echo', '{"text":"a"}', context, { logger: call });
    expect(given).toEqual([call]);
  });

  it('builds a new tool instance for every call through the factory', async () => {
    const seen = new Set<AgentTool>();
    const { executor } = setup({
      createTool: (toolClass) => {
        const tool = new toolClass({ logger: new CapturingAdminLogger() });
        seen.add(tool);
        return tool;
      },
    });
    await executor.execute('test_echo', '{"text":"a"}', context);
    await executor.execute('test_echo', '{"text":"b"}', context);
    expect(seen.size).toBe(2);
  });
});
