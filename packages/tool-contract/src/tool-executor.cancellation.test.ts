import { beforeEach, describe, expect, it } from 'vitest';
import { SleepTool, StubbornTool } from '../test/fixtures/tools.js';
import {
  AbortingTool,
  CommittingTool,
  effects,
  IdleReaderTool,
  PlainAbortingTool,
  UnstoppableTool,
} from '../test/fixtures/stopping-tools.js';
import { CapturingAdminLogger } from './admin-logger.js';
import { ExecutionErrorCode } from './errors.js';
import type { InvokeResult } from './invoke-result.js';
import { testContext } from './testing/index.js';
import { AgentToolExecutor, type AgentToolExecutorOptions } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';

// The rule (AGN-005 §8 as Aptix reads it): an answer that says cancelled, or TIMEOUT, means the call's
// effect did not happen and will not happen. Nothing here waits on a clock: the tools are released by
// hand, and the grace period is either long (the tool settles first) or short (it never settles).

const context = testContext({ sessionId: 'session-1', conversationId: 'conversation-1' });
const LONG_GRACE = 60_000;
const LONG_TIMEOUT = 60_000;

function setup(options: Partial<AgentToolExecutorOptions> = {}) {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry();
  registry.registerTools([
    CommittingTool,
    AbortingTool,
    UnstoppableTool,
    IdleReaderTool,
    PlainAbortingTool,
    SleepTool,
    StubbornTool,
  ]);
  return { logger, executor: new AgentToolExecutor({ registry, logger, cancelGraceMs: LONG_GRACE, ...options }) };
}

function payload(result: InvokeResult<string>): Record<string, unknown> {
  expect(result.errors).toEqual([]);
  return JSON.parse(result.result as string) as Record<string, unknown>;
}

function code(result: InvokeResult<string>): string | undefined {
  expect(result.successful).toBe(false);
  return result.errors[0]?.code;
}

/** Starts a call, waits until the tool runs, then cancels it. */
async function cancelWhileRunning(executor: AgentToolExecutor, name: string): Promise<InvokeResult<string>> {
  const controller = new AbortController();
  const pending = executor.execute(name, '{}', context, { signal: controller.signal, timeoutMs: LONG_TIMEOUT });
  await effects.started.promise;
  controller.abort();
  return pending;
}

/** Polls until `condition` holds (the test's own time-out bounds it). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

beforeEach(() => effects.reset());

describe('after a cancellation, the executor reports what the tool did', () => {
  it('reports a change the tool had already committed as that change, not as cancelled', async () => {
    const { executor } = setup();
    const result = await cancelWhileRunning(executor, 'test_committing');
    expect(payload(result)).toEqual({ applied: true, sessionId: 'session-1' });
    expect(effects.applied).toBe(1);
  });

  it('reports the cancelled shape when the tool stops with an AbortError, and logs no exception', async () => {
    const { executor, logger } = setup();
    for (const name of ['test_aborting', 'test_plain_aborting']) {
      effects.reset();
      expect(payload(await cancelWhileRunning(executor, name))).toMatchObject({
        wasCancelled: true,
        sessionId: 'session-1',
        conversationId: 'conversation-1',
      });
    }
    expect(logger.exceptions()).toEqual([]);
  });

  it("passes on the tool's own cancelled shape", async () => {
    const { executor } = setup();
    const controller = new AbortController();
    const pending = executor.execute('test_sleep', '{}', context, {
      signal: controller.signal,
      timeoutMs: LONG_TIMEOUT,
    });
    controller.abort();
    expect(payload(await pending)).toEqual({ wasCancelled: true, by: 'tool' });
  });

  it('waits for a tool that does not take the signal, and reports the change it then made', async () => {
    const { executor } = setup();
    const controller = new AbortController();
    const pending = executor.execute('test_unstoppable', '{}', context, {
      signal: controller.signal,
      timeoutMs: LONG_TIMEOUT,
    });
    await effects.started.promise;
    controller.abort();
    effects.release.open();
    expect(payload(await pending)).toEqual({ applied: true });
  });

  it('answers OUTCOME_UNKNOWN, never "cancelled", when a tool that may change something does not settle in time', async () => {
    const { executor, logger } = setup({ cancelGraceMs: 5 });
    const result = await cancelWhileRunning(executor, 'test_unstoppable');
    expect(code(result)).toBe(ExecutionErrorCode.OUTCOME_UNKNOWN);
    expect(result.errors[0]!.message).toMatch(
      /was cancelled by the caller after \d+ ms .* did not confirm within 5 ms that it stopped: its effect may have happened or may still happen\. Check the state it changes/,
    );
    // It finishes later: the operator can read what happened in the log.
    effects.release.open();
    await until(() => effects.applied === 1 && logger.entries.some((entry) => entry.tag.endsWith('__SettledLate]')));
    expect(
      logger.entries.find((entry) => entry.tag === '[test_unstoppable_ExecuteAsync__SettledLate]')?.message,
    ).toContain('succeeded: its effect happened');
  });

  it('answers "cancelled" for a read-only tool that does not settle: it changes nothing', async () => {
    const { executor } = setup({ cancelGraceMs: 5 });
    expect(payload(await cancelWhileRunning(executor, 'test_idle_reader'))).toMatchObject({
      wasCancelled: true,
      sessionId: 'session-1',
    });
  });
});

describe('after a time-out, the executor reports what the tool did', () => {
  it('reports a change the tool committed as it was stopped, not TIMEOUT', async () => {
    const { executor } = setup();
    expect(payload(await executor.execute('test_committing', '{}', context, { timeoutMs: 5 }))).toEqual({
      applied: true,
      sessionId: 'session-1',
    });
    expect(effects.applied).toBe(1);
  });

  it('answers TIMEOUT when the tool confirms it stopped (an AbortError or its cancelled shape)', async () => {
    const { executor, logger } = setup();
    for (const name of ['test_aborting', 'test_plain_aborting', 'test_sleep']) {
      const result = await executor.execute(name, '{}', context, { timeoutMs: 5 });
      expect(code(result)).toBe(ExecutionErrorCode.TIMEOUT);
      expect(result.errors[0]!.message).toBe(
        `${name} did not finish within 5 ms and was stopped; it made no change. Try a smaller request, or raise the tool's time-out.`,
      );
    }
    expect(logger.exceptions()).toEqual([]);
  });

  it('reports the change of a tool that does not take the signal but finishes within the grace period', async () => {
    const { executor, logger } = setup();
    const pending = executor.execute('test_unstoppable', '{}', context, { timeoutMs: 5 });
    // The deadline passes while the tool is held; it then finishes inside the grace period.
    await until(() => logger.errors().some((entry) => entry.tag === '[test_unstoppable_ExecuteAsync__Timeout]'));
    effects.release.open();
    expect(payload(await pending)).toEqual({ applied: true });
  });

  it('answers OUTCOME_UNKNOWN when a tool that may change something does not stop in time', async () => {
    const { executor } = setup({ cancelGraceMs: 5 });
    for (const name of ['test_unstoppable', 'test_stubborn']) {
      const result = await executor.execute(name, '{}', context, { timeoutMs: 5 });
      expect(code(result)).toBe(ExecutionErrorCode.OUTCOME_UNKNOWN);
      expect(result.errors[0]!.message).toContain(
        `${name} did not finish within 5 ms and was asked to stop, but did not confirm within 5 ms that it stopped`,
      );
    }
  });

  it('answers TIMEOUT for a read-only tool that does not stop: it changes nothing', async () => {
    const { executor } = setup({ cancelGraceMs: 5 });
    expect(code(await executor.execute('test_idle_reader', '{}', context, { timeoutMs: 5 }))).toBe(
      ExecutionErrorCode.TIMEOUT,
    );
  });
});

describe('the grace period', () => {
  it('refuses a grace period that is not a number of milliseconds', () => {
    const registry = new AgentToolRegistry();
    for (const cancelGraceMs of [-1, Number.NaN, Infinity])
      expect(() => new AgentToolExecutor({ registry, cancelGraceMs })).toThrow(
        /cancelGraceMs must be a number of milliseconds/,
      );
  });
});
