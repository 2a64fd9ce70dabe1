/**
 * The tool calls of one model response: each admitted against the session's mode as it runs, gated by
 * approvals, executed, and reported as events (with the tool's progress, when someone listens).
 */
import type { ResponseFunctionCallOutputItemList } from 'openai/resources/responses/responses';
import {
  InvokeResult,
  progressGate,
  type AdminLogger,
  type AgentToolExecutionContext,
  type AgentToolExecutor,
} from '@aptix/tool-contract';
import { toolNotInModeMessage } from '@aptix/tool-mode-catalog';
import { FIND_TOOLS, type FindToolsArguments } from '@aptix/tool-search';
import type { AgentSession } from '@aptix/agent-sessions';
import { awaitingApprovalRecord, type TurnApprovals } from './approvals.js';
import { ToolOutputCode, toolOutputText, type FunctionCall } from './conversation.js';
import type { ReasonerEventListener } from './events.js';
import { deferredToolNotInModeMessage, metaToolNotOfferedMessage } from './deferred-modes.js';
import type { ModePrompt } from './instructions.js';
import { targetOf, type CallTarget } from './meta-calls.js';
import type { ReasonerSessionStore } from './reasoner-options.js';
import { toolOutputContent } from './tool-output-content.js';

/** What a call came to, before it is written to the conversation. */
export interface CallOutcome {
  readonly call: FunctionCall;
  /** The tool that ran: the call's, or for `aptix_call_tool` the tool it named. */
  readonly tool: string;
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
  for (const call of calls)
    emit({ type: 'tool_call_started', sessionId, callId: call.callId, name: call.name, arguments: call.arguments });
  return Promise.all(
    calls.map(async (call): Promise<CallOutcome> => {
      // aptix_call_tool runs the tool it names exactly as a direct call of that tool would run.
      const target = targetOf(call, sessionId);
      const tool = target.kind === 'run' ? target.name : call.name;
      const ran =
        target.kind === 'answer'
          ? target.result
          : target.kind === 'find'
            ? await findTools(deps, target.args, context, logger)
            : await runTool(deps, call, target, context, { signal, logger, progress }, emit, approvals);
      if ('awaitingApproval' in ran)
        return { call, tool, successful: true, output: ran.awaitingApproval, pending: true };
      const output = toolOutputText(ran);
      // A cancelled call is answered on the spot: the client has nothing left to finish.
      if (ran.successful && deps.clientExecutedTools.has(tool) && !signal?.aborted) {
        emit({
          type: 'tool_call_pending',
          sessionId,
          callId: call.callId,
          name: call.name,
          arguments: call.arguments,
          serverResult: output,
        });
        return { call, tool, successful: true, output, pending: true };
      }
      emit({
        type: 'tool_call_finished',
        sessionId,
        callId: call.callId,
        name: call.name,
        successful: ran.successful,
        output,
      });
      const content = toolOutputContent(ran);
      return content === undefined
        ? { call, tool, successful: ran.successful, output, pending: false }
        : { call, tool, successful: true, output, content, pending: false };
    }),
  );
}

/**
 * Runs one tool, as the model called it or as `aptix_call_tool` named it: admitted by the session's
 * mode as it is now, gated by approvals (a gated call does not run: the record it waits with comes
 * back), executed with the tool's progress reported as the call's.
 */
async function runTool(
  deps: TurnCallDeps,
  call: FunctionCall,
  target: Extract<CallTarget, { kind: 'run' }>,
  context: AgentToolExecutionContext,
  { signal, logger, progress }: TurnCallOptions,
  emit: ReasonerEventListener,
  approvals: TurnApprovals | undefined,
): Promise<InvokeResult<string> | { awaitingApproval: string }> {
  const sessionId = context.sessionId!;
  const admitted = await admit(deps, target.name, context, logger, target.via);
  if ('refusal' in admitted) return admitted.refusal;
  // A call the tool's policy gates waits for a person: nothing runs, and the turn pauses.
  const gate =
    approvals === undefined ? undefined : await approvals.gate(target.name, target.arguments, admitted.context);
  if (gate?.gated) {
    const record = awaitingApprovalRecord(gate.approvalId, gate.message);
    emit({
      type: 'tool_call_pending',
      sessionId,
      callId: call.callId,
      name: call.name,
      arguments: call.arguments,
      serverResult: record,
    });
    return { awaitingApproval: record };
  }
  // The tool's progress, checked and bounded like on every surface; the last report waiting goes before the finish.
  const reports = progress
    ? progressGate((report) =>
        emit({ type: 'tool_call_progress', sessionId, callId: call.callId, name: call.name, ...report }),
      )
    : undefined;
  const callContext =
    reports === undefined ? admitted.context : { ...admitted.context, reportProgress: reports.report };
  const result = await deps.executor.execute(target.name, target.arguments, callContext, {
    logger,
    callId: call.callId,
    ...(signal === undefined ? {} : { signal }),
  });
  reports?.end();
  return result;
}

type Refusal = { refusal: InvokeResult<string> };

function refuse(message: string, code: string): Refusal {
  return { refusal: { successful: false as const, result: null, errors: [{ message, code }] } };
}

/** The session as the call is about to run, or why the call cannot run. */
async function currentSession(
  deps: TurnCallDeps,
  name: string,
  sessionId: string,
  logger: AdminLogger,
): Promise<{ session: AgentSession } | Refusal> {
  let session: AgentSession | undefined;
  try {
    session = await deps.sessions.getSession(sessionId);
  } catch (error) {
    logger.addException('[Reasoner_Turn__SessionReadFailed]', error, [['SessionId', sessionId]]);
  }
  if (session === undefined)
    return refuse(
      `${name} was not run: session ${sessionId} could not be read when the call was to run. Tell the user; do not assume it ran.`,
      ToolOutputCode.SESSION_UNAVAILABLE,
    );
  return { session };
}

/**
 * Reads the session as the call is about to run: the tool runs only if the session's mode offers it
 * now, and, called through a meta tool (`via`), only if that mode is deferred.
 */
async function admit(
  deps: TurnCallDeps,
  name: string,
  context: AgentToolExecutionContext,
  logger: AdminLogger,
  via?: string,
): Promise<{ context: AgentToolExecutionContext } | Refusal> {
  const sessionId = context.sessionId!;
  const read = await currentSession(deps, via ?? name, sessionId, logger);
  if ('refusal' in read) return read;
  const { session } = read;
  const prompt = deps.prompts.get(session.mode);
  const offered = prompt?.toolNames ?? [];
  if (via !== undefined && prompt?.deferred !== true)
    return refuse(metaToolNotOfferedMessage(via, session.mode, offered), ToolOutputCode.TOOL_NOT_OFFERED);
  if (!offered.includes(name)) {
    const message =
      prompt?.deferred === true
        ? deferredToolNotInModeMessage(
            name,
            session.mode,
            sessionId,
            [...deps.prompts.values()].filter((other) => other.toolNames.includes(name)).map((other) => other.mode),
          )
        : toolNotInModeMessage({ tool: name, mode: session.mode, sessionId, offered });
    return refuse(message, ToolOutputCode.TOOL_NOT_OFFERED);
  }
  return {
    context: { ...context, org: session.org ?? undefined, user: session.user ?? undefined, mode: session.mode },
  };
}

/** `aptix_find_tools`: a search of the session's mode as it is now, so a find after a mode change sees the new mode. */
async function findTools(
  deps: TurnCallDeps,
  args: FindToolsArguments,
  context: AgentToolExecutionContext,
  logger: AdminLogger,
): Promise<InvokeResult<string>> {
  const sessionId = context.sessionId!;
  const read = await currentSession(deps, FIND_TOOLS, sessionId, logger);
  if ('refusal' in read) return read.refusal;
  const prompt = deps.prompts.get(read.session.mode);
  if (prompt?.finder === undefined)
    return refuse(
      metaToolNotOfferedMessage(FIND_TOOLS, read.session.mode, prompt?.toolNames ?? []),
      ToolOutputCode.TOOL_NOT_OFFERED,
    ).refusal;
  // Found without the session, so the next step it suggests leaves sessionId out: the conversation's session is implicit.
  return InvokeResult.create(JSON.stringify({ ...prompt.finder.find(args, null), sessionId }));
}
