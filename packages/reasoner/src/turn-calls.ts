/**
 * The tool calls of one model response: each admitted against the session's mode as it runs, gated by
 * approvals, executed, and reported as events (with the tool's progress, when someone listens).
 */
import type { ResponseFunctionCallOutputItemList } from 'openai/resources/responses/responses';
import { progressGate, type AdminLogger, type AgentToolExecutionContext, type AgentToolExecutor, type InvokeResult } from '@aptix/tool-contract';
import { toolNotInModeMessage } from '@aptix/tool-mode-catalog';
import type { AgentSession } from '@aptix/agent-sessions';
import { awaitingApprovalRecord, type TurnApprovals } from './approvals.js';
import { ToolOutputCode, toolOutputText, type FunctionCall } from './conversation.js';
import type { ReasonerEventListener } from './events.js';
import type { ModePrompt } from './instructions.js';
import type { ReasonerSessionStore } from './reasoner.js';
import { toolOutputContent } from './tool-output-content.js';

/** What a call came to, before it is written to the conversation. */
export interface CallOutcome {
  readonly call: FunctionCall;
  readonly successful: boolean;
  output: string;
  /** For a result with content blocks: the function call's output as Responses API input items. */
  readonly content?: ResponseFunctionCallOutputItemList;
  readonly pending: boolean;
}

/** What running a turn's calls needs from the Reasoner. */
export interface TurnCallDeps {
  readonly executor: Pick<AgentToolExecutor, 'execute'>;
  readonly sessions: Pick<ReasonerSessionStore, 'getSession'>;
  readonly prompts: ReadonlyMap<string, ModePrompt>;
  readonly clientExecutedTools: ReadonlySet<string>;
}

export interface TurnCallOptions {
  readonly signal: AbortSignal | undefined;
  readonly logger: AdminLogger;
  /** Someone listens to the turn's events: tools get `context.reportProgress`, and their reports become `tool_call_progress` events. */
  readonly progress: boolean;
}

/**
 * Runs a response's calls concurrently; the outcomes come back in call order. Each call checks the
 * session's mode at the moment it runs, as every other surface does: another client may have moved the
 * session to a mode that does not offer the tool while the model was answering.
 */
export async function runCalls(
  deps: TurnCallDeps,
  calls: readonly FunctionCall[],
  context: AgentToolExecutionContext,
  { signal, logger, progress }: TurnCallOptions,
  emit: ReasonerEventListener,
  approvals: TurnApprovals | undefined,
): Promise<CallOutcome[]> {
  const sessionId = context.sessionId!;
  for (const call of calls) emit({ type: 'tool_call_started', sessionId, callId: call.callId, name: call.name, arguments: call.arguments });
  return Promise.all(
    calls.map(async (call): Promise<CallOutcome> => {
      const admitted = await admit(deps, call.name, context, logger);
      let result: InvokeResult<string>;
      if ('refusal' in admitted) {
        result = admitted.refusal;
      } else {
        // A call the tool's policy gates waits for a person: nothing runs, and the turn pauses.
        const gate = approvals === undefined ? undefined : await approvals.gate(call.name, call.arguments, admitted.context);
        if (gate?.gated) {
          const record = awaitingApprovalRecord(gate.approvalId, gate.message);
          emit({ type: 'tool_call_pending', sessionId, callId: call.callId, name: call.name, arguments: call.arguments, serverResult: record });
          return { call, successful: true, output: record, pending: true };
        }
        // The tool's progress, checked and bounded like on every surface; the last report waiting goes before the finish.
        const reports = progress ? progressGate((report) => emit({ type: 'tool_call_progress', sessionId, callId: call.callId, name: call.name, ...report })) : undefined;
        const callContext = reports === undefined ? admitted.context : { ...admitted.context, reportProgress: reports.report };
        result = await deps.executor.execute(call.name, call.arguments, callContext, { logger, ...(signal === undefined ? {} : { signal }) });
        reports?.end();
      }
      const output = toolOutputText(result);
      // A cancelled call is answered on the spot: the client has nothing left to finish.
      if (result.successful && deps.clientExecutedTools.has(call.name) && !signal?.aborted) {
        emit({ type: 'tool_call_pending', sessionId, callId: call.callId, name: call.name, arguments: call.arguments, serverResult: output });
        return { call, successful: true, output, pending: true };
      }
      emit({ type: 'tool_call_finished', sessionId, callId: call.callId, name: call.name, successful: result.successful, output });
      const content = toolOutputContent(result);
      return content === undefined ? { call, successful: result.successful, output, pending: false } : { call, successful: true, output, content, pending: false };
    }),
  );
}

/** Reads the session as the call is about to run: the tool runs only if the session's mode offers it now. */
async function admit(deps: TurnCallDeps, name: string, context: AgentToolExecutionContext, logger: AdminLogger): Promise<{ context: AgentToolExecutionContext } | { refusal: InvokeResult<string> }> {
  const sessionId = context.sessionId!;
  let session: AgentSession | undefined;
  try {
    session = await deps.sessions.getSession(sessionId);
  } catch (error) {
    logger.addException('[Reasoner_Turn__SessionReadFailed]', error, [['SessionId', sessionId]]);
  }
  const refuse = (message: string, code: string) => ({ refusal: { successful: false as const, result: null, errors: [{ message, code }] } });
  if (session === undefined) return refuse(`${name} was not run: session ${sessionId} could not be read when the call was to run. Tell the user; do not assume it ran.`, ToolOutputCode.SESSION_UNAVAILABLE);
  const offered = deps.prompts.get(session.mode)?.toolNames ?? [];
  if (!offered.includes(name)) return refuse(toolNotInModeMessage({ tool: name, mode: session.mode, sessionId, offered }), ToolOutputCode.TOOL_NOT_OFFERED);
  return { context: { ...context, org: session.org ?? undefined, user: session.user ?? undefined, mode: session.mode } };
}
