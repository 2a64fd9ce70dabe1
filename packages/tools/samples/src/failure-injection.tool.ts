import { Type, type Static } from 'typebox';
import {
  functionToolSchema,
  InvokeResult,
  TypedAgentTool,
  usage,
  type AgentToolExecutionContext,
  type ToolDependencies,
} from '@aptix/tool-contract';

const Args = Type.Object(
  {
    mode: Type.Enum(['error', 'exception', 'malformed_json'], {
      type: 'string',
      description: 'How to fail: "error", "exception" or "malformed_json".',
    }),
    payload: Type.Optional(
      Type.String({ description: 'Free text recorded with the failure, to tell test runs apart.' }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Fails on purpose, in each way a host must survive (AGN-005 §9). `exception` and `malformed_json`
 * break the rules on purpose: the base and the executor must turn them into clean failed results.
 */
export class FailureInjectionTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'testing_failure_injection';
  static readonly ToolUsageMetadata = usage`
    testing_failure_injection — Usage Guide

    Primary purpose:
    - Fail on purpose, to test that the host and the agent recover from each kind of tool failure.

    Rules:
    - Call it only when the user or a test asks for a failure; it never does useful work.
    - Every call fails; the failure is the result. Do not retry it expecting success.

    Arguments:
    - mode (required): how to fail.
      - "error": an ordinary failed result (code INTENTIONAL_FAILURE); the failure is also logged as an event.
      - "exception": the tool throws; the host returns a generic failure without details (code TOOL_EXCEPTION).
      - "malformed_json": the tool returns text that is not JSON; the host's executor must refuse to pass it on
        and return a failed result instead (code MALFORMED_RESULT). This is the point of the mode.
    - payload (optional): free text recorded with the failure.

    Error codes:
    - INTENTIONAL_FAILURE: mode "error".
    - TOOL_EXCEPTION: mode "exception".
    - MALFORMED_RESULT: mode "malformed_json", when called through the executor.
    - INVALID_ARGUMENTS: 'mode' is missing or not one of the three, or 'payload' is not a string.
    - TIMEOUT: the host stopped the call at its time-out before it finished; nothing was done.
    - A successful result with "wasCancelled": true: the caller cancelled the call before it ran; nothing was done.

    Good usage:
    - { "mode": "error", "payload": "run 42" } → a failed result; carry on with the conversation.

    Bad usage:
    - Calling it to do real work, or calling it again after it failed as asked.
    - { "mode": "crash" }: not a mode.
  `;

  static getSchema() {
    return functionToolSchema(
      FailureInjectionTool.ToolName,
      'Fails on purpose, in the way that mode asks, to test error handling.',
      Args,
    );
  }

  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }

  protected run({ mode, payload }: Static<typeof Args>, context: AgentToolExecutionContext) {
    switch (mode) {
      case 'error':
        this.logger.addCustomEvent('error', 'FailureInjectionTool.ExecuteAsync', 'Intentional failure requested.', [
          ['ConversationId', context.conversationId ?? ''],
          ['SessionId', context.sessionId ?? ''],
          ['Payload', payload ?? ''],
        ]);
        return InvokeResult.fromError(`${this.name} failed on purpose (mode "error").`, 'INTENTIONAL_FAILURE');
      case 'exception':
        throw new Error(`Intentional exception requested (payload: ${payload ?? 'none'}).`);
      case 'malformed_json':
        return InvokeResult.create('<not json>');
    }
  }
}
