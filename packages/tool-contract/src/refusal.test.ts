import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { CapturingAdminLogger } from './admin-logger.js';
import type { AgentTool, ToolDependencies } from './agent-tool.js';
import { ExecutionErrorCode } from './errors.js';
import { InvokeResult } from './invoke-result.js';
import { ToolRefusal } from './refusal.js';
import { functionToolSchema } from './schema.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool } from './typed-agent-tool.js';

const NoArgs = Type.Object({}, { additionalProperties: false });
let thrown: () => unknown = () => undefined;
let inConstructor = false;

class TypedRefused extends TypedAgentTool<typeof NoArgs> {
  static readonly ToolName = 'test_typed_refused';
  static readonly ToolUsageMetadata = 'Throws what the test sets.';
  static getSchema() {
    return functionToolSchema(TypedRefused.ToolName, 'Throws what the test sets.', NoArgs);
  }
  constructor({ logger }: ToolDependencies) {
    super(NoArgs, logger);
  }
  protected async run(): Promise<object> {
    throw thrown();
  }
}

class PlainRefused implements AgentTool {
  static readonly ToolName = 'test_plain_refused';
  static readonly ToolUsageMetadata = 'Throws what the test sets.';
  static getSchema() {
    return {
      type: 'function' as const,
      name: PlainRefused.ToolName,
      description: 'Throws what the test sets.',
      parameters: { type: 'object' as const, properties: {}, required: [], additionalProperties: false },
    };
  }
  readonly name = PlainRefused.ToolName;
  readonly isToolFullyExecutedOnServer = true;
  constructor() {
    if (inConstructor) throw thrown();
  }
  execute(): Promise<InvokeResult<string>> {
    throw thrown();
  }
}

const registry = new AgentToolRegistry({ logger: new CapturingAdminLogger() });
registry.registerTools([TypedRefused, PlainRefused]);
const executor = new AgentToolExecutor({ registry });

describe('ToolRefusal: a host refusing what a tool asked for', () => {
  it.each([TypedRefused.ToolName, PlainRefused.ToolName])(
    'fails %s with the refusal code and the host message, not TOOL_EXCEPTION',
    async (name) => {
      thrown = () =>
        new ToolRefusal(
          ExecutionErrorCode.PROCESS_EXIT_REFUSED,
          'it called process.exit(3), which would end the host; the host refused it.',
        );
      expect(await executor.execute(name, '{}')).toEqual(
        InvokeResult.fromError(
          `${name} failed: it called process.exit(3), which would end the host; the host refused it.`,
          'PROCESS_EXIT_REFUSED',
        ),
      );
    },
  );

  it("fails with the refusal code when the tool's constructor ran into it", async () => {
    thrown = () =>
      new ToolRefusal(
        ExecutionErrorCode.PROCESS_EXIT_REFUSED,
        'it called process.exit(), which would end the host; the host refused it.',
      );
    inConstructor = true;
    try {
      expect((await executor.execute(PlainRefused.ToolName, '{}')).errors).toEqual([
        {
          code: 'PROCESS_EXIT_REFUSED',
          message: `${PlainRefused.ToolName} failed: it called process.exit(), which would end the host; the host refused it.`,
        },
      ]);
    } finally {
      inConstructor = false;
    }
  });

  it.each([
    ['a look-alike without the mark', () => Object.assign(new Error('x'), { code: 'PROCESS_EXIT_REFUSED' })],
    [
      'a refusal with a code outside the registry',
      () => Object.assign(new ToolRefusal(ExecutionErrorCode.TIMEOUT, 'x'), { code: 'MADE_UP' }),
    ],
    [
      'a Proxy whose traps throw',
      () =>
        new Proxy(
          {},
          {
            get: () => {
              throw new Error('trap');
            },
          },
        ),
    ],
  ])('is TOOL_EXCEPTION for %s', async (_what, make) => {
    thrown = make;
    for (const name of [TypedRefused.ToolName, PlainRefused.ToolName])
      expect((await executor.execute(name, '{}')).errors[0]!.code).toBe('TOOL_EXCEPTION');
  });
});
