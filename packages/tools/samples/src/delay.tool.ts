import { setTimeout as sleep } from 'node:timers/promises';
import { Type, type Static } from 'typebox';
import {
  functionToolSchema,
  TypedAgentTool,
  usage,
  type AgentToolExecutionContext,
  type ToolDependencies,
} from '@aptix/tool-contract';

const MAX_DELAY_MS = 60_000;

const Args = Type.Object(
  {
    milliseconds: Type.Integer({
      minimum: 0,
      maximum: MAX_DELAY_MS,
      description: 'How long to wait, in milliseconds: a whole number from 0 to 60000.',
    }),
  },
  { additionalProperties: false },
);

/** Waits, and stops early when the call is cancelled: the reference for long-running tools (AGN-005 §8). */
export class DelayTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'testing_delay';
  static readonly ToolUsageMetadata = usage`
    testing_delay — Usage Guide

    Primary purpose:
    - Wait for a given time, to test time-outs, cancellation and slow tools.

    Rules:
    - Call it only when the user or a test asks for a delay; it does no other work.
    - Do not use it to pace other tool calls or to wait for something to happen.
    - A cancelled call is not an error: it returns a successful result with "wasCancelled": true.

    Arguments:
    - milliseconds (required): how long to wait, a whole number from 0 to 60000.

    Result:
    - wasCancelled (false when the full delay ran), elapsedMs, requestedMs, sessionId, conversationId.

    Error codes:
    - INVALID_ARGUMENTS: 'milliseconds' is missing, not a whole number, or outside 0 to 60000.
    - TIMEOUT: the host stopped the call because it ran longer than the host allows; the wait ended early.
    - TOOL_EXCEPTION: the tool failed unexpectedly. Tell the user; do not retry more than once.
    - A successful result with "wasCancelled": true: the caller cancelled the wait before it ran its full time.

    Good usage:
    - { "milliseconds": 250 } → waits about a quarter of a second.

    Bad usage:
    - { "milliseconds": 120000 }: at most 60000.
    - { "milliseconds": 1.5 }: whole milliseconds only.
  `;
  /** Longer than the longest delay, so the executor's default time-out (30 s) does not cut a valid call short. */
  static readonly TimeoutMs = MAX_DELAY_MS + 5_000;
  // A long wait is what tasks are for: a client that supports them gets a task to poll.
  static readonly TaskSupport = 'optional' as const;

  static getSchema() {
    return functionToolSchema(
      DelayTool.ToolName,
      'Waits for the given number of milliseconds; stops early, without error, when cancelled.',
      Args,
    );
  }

  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }

  protected async run({ milliseconds }: Static<typeof Args>, context: AgentToolExecutionContext, signal: AbortSignal) {
    const started = performance.now();
    // Progress, when the caller asked for it: the milliseconds waited so far, ten times over the delay.
    const report = context.reportProgress;
    report?.({ progress: 0, total: milliseconds, message: `waiting ${milliseconds} ms` });
    const ticker =
      report && milliseconds >= 10
        ? setInterval(
            () =>
              report({
                progress: Math.min(milliseconds, Math.round(performance.now() - started)),
                total: milliseconds,
              }),
            milliseconds / 10,
          )
        : undefined;
    // The timers are cleared on abort, so a cancelled delay leaves nothing running.
    const wasCancelled = await sleep(milliseconds, false, { signal })
      .catch((error: unknown) => {
        if (signal.aborted) return true;
        throw error;
      })
      .finally(() => clearInterval(ticker));
    if (!wasCancelled) report?.({ progress: milliseconds, total: milliseconds, message: 'done' });
    return {
      wasCancelled,
      elapsedMs: Math.round(performance.now() - started),
      requestedMs: milliseconds,
      sessionId: context.sessionId ?? null,
      conversationId: context.conversationId ?? null,
    };
  }
}
