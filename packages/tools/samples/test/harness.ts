import { expect } from 'vitest';
import {
  AgentToolExecutor,
  AgentToolRegistry,
  type InvokeResult,
  type AgentTool,
  type AgentToolExecutionContext,
  type AnyAgentToolClass,
  type InvokeError,
} from '@aptix/tool-contract';
import { CapturingAdminLogger, testContext } from '@aptix/tool-contract/testing';

/** The two ways a tool is called: its own `execute`, and by name through the executor. */
export type Via = 'direct' | 'executor';
export const VIAS: readonly Via[] = ['direct', 'executor'];

/** A secret the tests plant in exceptions, to prove it never reaches a result. */
export const SECRET = 'database password is hunter2';
const SECRET_ERROR_MESSAGE = `${SECRET}\n    at connect (/srv/db.js:12:7)`;

/**
 * One tool, registered in a registry (so every suite also checks the contract), with an executor
 * and an instance sharing one capturing logger.
 */
export function harness(toolClass: AnyAgentToolClass) {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  registry.registerTool(toolClass);
  let createTool = (): AgentTool => new toolClass({ logger });
  const executor = new AgentToolExecutor({ registry, logger, createTool: () => createTool() });
  const name: string = toolClass.ToolName;

  return {
    logger,
    registry,
    executor,
    name,
    /** Calls the tool one way or the other, with the test context unless told otherwise. */
    call(
      via: Via,
      args: string,
      options: { context?: AgentToolExecutionContext; signal?: AbortSignal; timeoutMs?: number } = {},
    ): Promise<InvokeResult<string>> {
      const { context = testContext(), signal, timeoutMs } = options;
      return via === 'direct'
        ? createTool().execute(args, context, signal)
        : executor.execute(name, args, context, { signal, timeoutMs });
    },
    /** From now on, every instance throws from `run` an error whose message holds {@link SECRET} and a stack frame. */
    breakRun(): void {
      createTool = () => {
        const tool = new toolClass({ logger });
        Object.defineProperty(tool, 'run', {
          value: () => {
            throw new Error(SECRET_ERROR_MESSAGE);
          },
        });
        return tool;
      };
    },
  };
}

/** The parsed JSON of a successful result; fails the test, with the errors, when it is not one. */
export function payloadOf(result: InvokeResult<string>): Record<string, unknown> {
  expect(result.errors, 'a successful result has no errors').toEqual([]);
  expect(result.successful).toBe(true);
  expect(typeof result.result).toBe('string');
  return JSON.parse(result.result as string) as Record<string, unknown>;
}

/** The one error of a failed result. */
export function errorOf(result: InvokeResult<string>): InvokeError {
  expect(result.successful).toBe(false);
  expect(result.result).toBeNull();
  expect(result.errors).toHaveLength(1);
  return result.errors[0]!;
}

/** What every tool suite checks when `run` throws: a generic failure, no detail, the exception logged once with its tag. */
export async function expectGenericFailureOnException(
  h: ReturnType<typeof harness>,
  via: Via,
  args: string,
): Promise<void> {
  h.breakRun();
  const error = errorOf(await h.call(via, args));
  expect(error).toEqual({ message: `${h.name} failed to process arguments.`, code: 'TOOL_EXCEPTION' });
  const exceptions = h.logger.exceptions();
  expect(exceptions).toHaveLength(1);
  expect(exceptions[0]!.tag).toBe(`[${h.name}_ExecuteAsync__Exception]`);
  expect(exceptions[0]!.message).toContain(SECRET);
  expect(exceptions[0]!.pairs).toEqual(
    expect.arrayContaining([
      ['SessionId', 'test-session'],
      ['ConversationId', 'test-conversation'],
    ]),
  );
}
