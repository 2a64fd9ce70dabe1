import type { AgentSessionManager, SetSessionModeResult } from '@aptix/agent-sessions';
import {
  ExecutionErrorCode,
  functionToolSchema,
  InvokeResult,
  parseArgumentsJson,
  TypedAgentTool,
  usage,
  validateArguments,
  type AgentToolExecutionContext,
  type DecodedArguments,
  type JsonSchema,
  type LogPairs,
  type RunOutput,
  type ToolDependencies,
} from '@aptix/tool-contract';
import { Type, type Static } from 'typebox';

const Args = Type.Object(
  {
    mode: Type.String({
      minLength: 1,
      description:
        'The key of the mode to switch the current session to, e.g. "ddr_authoring" (agent_list_modes lists the keys).',
    }),
    branch: Type.Boolean({
      description:
        'false: switch this session and keep working in it. true: switch, and the user wants the new work to start as a separate session in that mode.',
    }),
    reason: Type.String({
      minLength: 1,
      description: 'A short explanation of why this mode fits the current request; kept for audit.',
    }),
  },
  // sessionId, org and user come from the execution context, never from the model (TUL-007 §3.3).
  { additionalProperties: false },
);
type ModeChangeArgs = Static<typeof Args>;

/** The dependencies the host injects (awilix resolves them by these names). Both are required (TUL-007 §3.2). */
export interface ModeChangeToolDependencies extends ToolDependencies {
  readonly sessionManager: AgentSessionManager;
}

/** The successful result (TUL-007 §3.6, plus the identifiers of AGN-005 §5). */
export interface ModeChangeResult {
  readonly success: true;
  /** The mode written to the session. */
  readonly mode: string;
  readonly branch: boolean;
  readonly reason: string;
  readonly sessionId: string;
  readonly conversationId: string | null;
}

/** The exact messages of TUL-007 §3.4 and §3.6, in one place: models and tests depend on them. */
export const ModeChangeMessage = {
  ARGUMENTS_REQUIRED: 'ModeChangeTool requires a non-empty arguments object.',
  CONTEXT_REQUIRED: 'ModeChangeTool requires a valid execution context.',
  SESSION_ID_MISSING: 'ModeChangeTool cannot change mode because the session id is missing.',
  MODE_REQUIRED: "ModeChangeTool requires a non-empty 'mode' string.",
  BRANCH_REQUIRED: "ModeChangeTool requires a 'branch' boolean flag.",
  REASON_REQUIRED: "ModeChangeTool requires a non-empty 'reason' string explaining why the mode change is needed.",
  FAILED: 'ModeChangeTool failed to change the session mode.',
} as const;

/** The stable tags this tool logs under. */
export const ModeChangeLogTag = {
  /** An exception from the session manager (or anywhere in the call): TUL-007 §3.6. */
  EXCEPTION: '[agent_change_mode_ExecuteAsync__Exception]',
  /** Called without a session id in the context: a host bug, logged as an error (TUL-007 §3.4). */
  MISSING_SESSION_ID: '[agent_change_mode_ExecuteAsync__MissingSessionId]',
  /** The session manager refused the change (unknown mode, unknown session, a value too long, a busy store): nothing was persisted. */
  REFUSED: '[agent_change_mode_ExecuteAsync__Refused]',
  /** The store cannot tell whether the change was committed (the connection broke during COMMIT). */
  OUTCOME_UNKNOWN: '[agent_change_mode_ExecuteAsync__OutcomeUnknown]',
} as const;

/**
 * The store failures after which nothing was saved: the code the model gets (one its usage guide lists)
 * and what it is told. The store's own message is logged, not sent where it can name the database file
 * or server; only the messages about the arguments themselves are passed on.
 */
const NOTHING_SAVED: Readonly<
  Record<string, { readonly code: string; readonly explain: (storeMessage: string) => string }>
> = {
  VALUE_TOO_LONG: { code: 'VALUE_TOO_LONG', explain: (message) => `${message} The session's mode was not changed.` },
  INVALID_ARGUMENT: {
    code: ExecutionErrorCode.INVALID_ARGUMENTS,
    explain: (message) => `${message} The session's mode was not changed.`,
  },
  TIMEOUT: {
    code: 'TIMEOUT',
    explain: () =>
      "The session store did not answer in time (the session may be busy with another change). The session's mode was not changed; try again in a moment.",
  },
  DATABASE_LOCKED: {
    code: 'DATABASE_LOCKED',
    explain: () =>
      "The session store is locked by another process. The session's mode was not changed; try again in a moment.",
  },
  UNAVAILABLE: {
    code: 'UNAVAILABLE',
    explain: () =>
      "The session store cannot be reached. The session's mode was not changed; tell the user, and try again later.",
  },
  STORE_CLOSED: {
    code: 'UNAVAILABLE',
    explain: () => "The session store is shutting down. The session's mode was not changed; try again later.",
  },
};

/** A thrown store failure after which nothing was saved, as the code and message the model gets; else undefined. */
function nothingSaved(
  error: unknown,
): { code: string; message: string; storeCode: string; storeMessage: string } | undefined {
  if (!(error instanceof Error) || error.name !== 'SessionStoreError') return undefined;
  const storeCode = (error as Error & { code?: unknown }).code;
  const known = typeof storeCode === 'string' ? NOTHING_SAVED[storeCode] : undefined;
  return known === undefined
    ? undefined
    : {
        code: known.code,
        message: known.explain(error.message),
        storeCode: storeCode as string,
        storeMessage: error.message,
      };
}

/**
 * `agent_change_mode` (TUL-007): changes the current session's mode, after the user has confirmed the
 * switch. The tool is catalog-agnostic: the session manager decides whether the mode exists, and its
 * refusal (which lists the valid modes) reaches the model as a failed result with its own code.
 *
 * @example
 * const tool = new ModeChangeTool({ logger, sessionManager });
 * await tool.execute('{"mode":"ddr_authoring","branch":false,"reason":"The user wants to write a DDR."}', { sessionId, conversationId, org, user });
 */
export class ModeChangeTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'agent_change_mode';
  static readonly ToolUsageMetadata = usage`
    agent_change_mode — Usage Guide

    Primary purpose:
    - Use this tool to change the current agent session mode, but only after the user has explicitly
      agreed to switch.
    - It is offered in every mode, so you can always leave a mode that does not fit.

    Rules:
    - First, propose a specific target mode and ask whether the user wants to (1) stay in the current
      mode, (2) switch this session to that mode, or (3) switch and start a new session.
    - Call this tool only for options (2) or (3): use branch=false for switching the current session,
      and branch=true when the user wants to switch and start a new session.
    - Never call it without the user's explicit confirmation; if the user chooses to stay, do not call it.
    - Call it sparingly: only when a mode change is clearly indicated and confirmed.
    - Use a mode key exactly as agent_list_modes gives it; call agent_list_modes first if you are unsure.
    - Never put sessionId, org or user in the arguments: they come from the execution context.

    Arguments:
    - mode (required string): the key of the target mode, e.g. "ddr_authoring".
    - branch (required boolean): false to switch this session; true to switch and start a new session.
    - reason (required string): a short explanation of why this mode fits the user's request.

    Result:
    - { "success": true, "mode", "branch", "reason", "sessionId", "conversationId" } once the mode is saved.

    Error codes:
    - UNKNOWN_MODE: no mode has that key; the message lists the valid modes. Pick one of them with the user.
    - SESSION_NOT_FOUND: the current session does not exist; the mode was not changed.
    - INVALID_ARGUMENTS: mode, branch or reason is missing or empty, holds a character that cannot be
      stored, an extra argument was sent, or the session id is missing from the context. Nothing was changed.
    - VALUE_TOO_LONG: the reason (or mode) is longer than the session store keeps; the message gives the
      limit. Nothing was changed: call again with a shorter reason.
    - TIMEOUT, DATABASE_LOCKED, UNAVAILABLE: the session store was busy or unreachable. Nothing was
      changed; try again in a moment, or tell the user.
    - OUTCOME_UNKNOWN: the session store lost its connection while saving, so the change may or may not
      have been saved. Do not claim either: tell the user, and check the session's mode (the message
      says how) before doing anything that depends on it.
    - TOOL_EXCEPTION: "ModeChangeTool failed to change the session mode." The mode was not changed;
      tell the user and do not claim the switch happened.
    - TIMEOUT (from the host) and a cancelled call: a result with "wasCancelled": true means the call was
      cancelled before anything was saved; the mode is unchanged.

    Good usage:
    - User: "Yes, switch this session to DDR authoring."
      → {"mode": "ddr_authoring", "branch": false, "reason": "The user wants to write a design decision record."}
    - User: "Option 3, start a new session for it."
      → {"mode": "ddr_authoring", "branch": true, "reason": "The user wants the DDR work in its own session."}

    Bad usage:
    - Switching as soon as a request looks like another mode, without asking the user first.
    - Calling it when the user said to stay in the current mode.
    - {"mode": "ddr_authoring", "branch": false, "reason": "", "sessionId": "abc"}: empty reason and a sessionId argument.
  `;

  static getSchema() {
    return functionToolSchema(
      ModeChangeTool.ToolName,
      'Changes the mode for the current agent session to the specified mode string. Call only ' +
        "after the user confirms a mode change, and provide a short 'reason' describing why this " +
        'mode fits the current request. Set branch=true when the user wants the new work to start ' +
        'as a separate session.',
      Args,
    );
  }

  readonly #sessions: AgentSessionManager;

  constructor(dependencies: ModeChangeToolDependencies) {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (dependencies === null || typeof dependencies !== 'object')
      throw new TypeError('ModeChangeTool requires its dependencies: { logger, sessionManager }.');
    super(Args, dependencies.logger);
    const { sessionManager } = dependencies;
    if (
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      sessionManager === null ||
      typeof sessionManager !== 'object' ||
      typeof sessionManager.setSessionMode !== 'function'
    ) {
      throw new TypeError('ModeChangeTool requires a sessionManager: an AgentSessionManager with setSessionMode().');
    }
    this.#sessions = sessionManager;
  }

  /**
   * TUL-007 §3.4 checks the context before the base class sees the call: the base treats a missing
   * context as `{}`, which would turn "no context" into "no session id".
   */
  override execute(
    argumentsJson: string,
    context: AgentToolExecutionContext,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>> {
    if (isBlank(argumentsJson)) return Promise.resolve(refusal(ModeChangeMessage.ARGUMENTS_REQUIRED));
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (context === null || context === undefined || typeof context !== 'object')
      return Promise.resolve(refusal(ModeChangeMessage.CONTEXT_REQUIRED));
    return super.execute(argumentsJson, context, signal);
  }

  /** TUL-007 §3.4's order and messages; then the schema, which also refuses extra arguments. */
  protected override decode(input: unknown, context: AgentToolExecutionContext): DecodedArguments<ModeChangeArgs> {
    if (isBlank(input)) return invalid('(arguments)', ModeChangeMessage.ARGUMENTS_REQUIRED);
    if (typeof context.sessionId !== 'string' || context.sessionId.trim() === '') {
      this.logger.addError(
        ModeChangeLogTag.MISSING_SESSION_ID,
        'agent_change_mode was called without a session id in its execution context, so no mode can be changed. The host must pass the session id of the call.',
        pairs(context),
      );
      return invalid('(context).sessionId', ModeChangeMessage.SESSION_ID_MISSING);
    }
    const parsed = parseArgumentsJson(this.name, input);
    if (!parsed.ok) return parsed;
    const args = parsed.value;
    if (args === null || typeof args !== 'object' || Array.isArray(args))
      return invalid('(arguments)', ModeChangeMessage.ARGUMENTS_REQUIRED);
    const { mode, branch, reason } = args as Record<string, unknown>;
    if (!isFilled(mode)) return invalid('mode', ModeChangeMessage.MODE_REQUIRED);
    if (typeof branch !== 'boolean') return invalid('branch', ModeChangeMessage.BRANCH_REQUIRED);
    if (!isFilled(reason)) return invalid('reason', ModeChangeMessage.REASON_REQUIRED);
    // The same schema object the base validates with, so the compiled validator is shared.
    return validateArguments<ModeChangeArgs>(this.name, Args as unknown as JsonSchema, args);
  }

  protected override failureMessage(): string {
    return ModeChangeMessage.FAILED;
  }

  /**
   * Passes the call's signal to the session store. On an abort the store answers promptly with what
   * happened: cancelled before the change committed (reported as cancelled, AGN-005 §8), committed
   * (reported as the success it is), or unknown (reported as OUTCOME_UNKNOWN, claiming neither).
   * Other exceptions propagate to the base, which logs them under {@link ModeChangeLogTag.EXCEPTION}
   * and answers {@link ModeChangeMessage.FAILED}.
   */
  protected async run(
    { mode, branch, reason }: ModeChangeArgs,
    context: AgentToolExecutionContext,
    signal: AbortSignal,
  ): Promise<RunOutput> {
    const sessionId = context.sessionId!;
    if (signal.aborted) return cancelled(context);
    let outcome: SetSessionModeResult;
    try {
      outcome = await this.#sessions.setSessionMode(sessionId, mode, reason, context.org, context.user, {
        branch,
        signal,
      });
    } catch (error) {
      const refusal = nothingSaved(error);
      if (refusal === undefined) throw error;
      this.logger.addCustomEvent('warn', ModeChangeLogTag.REFUSED, refusal.storeMessage, [
        ...pairs(context),
        ['Mode', mode],
        ['Code', refusal.storeCode],
      ]);
      return InvokeResult.fromError(refusal.message, refusal.code);
    }
    if (outcome.applied === 'unknown') {
      this.logger.addCustomEvent('warn', ModeChangeLogTag.OUTCOME_UNKNOWN, outcome.message, [
        ...pairs(context),
        ['Mode', mode],
        ['Code', outcome.code],
      ]);
      return InvokeResult.fromError(outcome.message, outcome.code);
    }
    if (!outcome.applied) {
      if (outcome.code === 'CANCELLED') return cancelled(context);
      this.logger.addCustomEvent('info', ModeChangeLogTag.REFUSED, outcome.message, [
        ...pairs(context),
        ['Mode', mode],
        ['Code', outcome.code],
      ]);
      return InvokeResult.fromError(outcome.message, outcome.code);
    }
    const result: ModeChangeResult = {
      success: true,
      mode: outcome.change.toMode,
      branch,
      reason,
      sessionId,
      conversationId: context.conversationId ?? null,
    };
    return result;
  }
}

/** AGN-005 §8's cancelled result, given only when nothing was saved. */
function cancelled(context: AgentToolExecutionContext): RunOutput {
  return {
    wasCancelled: true,
    message: 'The mode change was cancelled before it was applied; the session mode is unchanged.',
    sessionId: context.sessionId ?? null,
    conversationId: context.conversationId ?? null,
  };
}

function isBlank(input: unknown): boolean {
  return input === null || input === undefined || (typeof input === 'string' && input.trim() === '');
}

function isFilled(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function invalid(path: string, message: string): DecodedArguments<never> {
  return { ok: false, message, issues: [{ path, problem: message }] };
}

function refusal(message: string): InvokeResult<string> {
  return InvokeResult.fromError(message, ExecutionErrorCode.INVALID_ARGUMENTS);
}

function pairs(context: AgentToolExecutionContext): LogPairs {
  return [
    ['SessionId', context.sessionId ?? ''],
    ['ConversationId', context.conversationId ?? ''],
  ];
}
