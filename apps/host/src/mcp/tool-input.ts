import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  MissingRequiredClientCapabilityError,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequests,
  type ServerContext,
} from '@modelcontextprotocol/server';
import {
  ExecutionErrorCode,
  InvokeResult,
  type ToolInputChannel,
  type ToolInputNeeded,
  type ToolInputRequest,
} from '@aptix/tool-contract';
import type { AptixHost } from '../aptix-host.js';
import { checkedInputResponses } from './input-responses.js';
import {
  bindingOf,
  canElicitForm,
  checkBinding,
  requestStateCodec,
  type CallBinding,
  type ModernCall,
} from './approval-elicitation.js';

/**
 * A tool's own requests to the client (`InvokeResult.inputRequired`): questions to the user
 * (`elicitation/create`), completions from the client's model (`sampling/createMessage`) and the
 * client's roots (`roots/list`). On 2025 revisions the host sends each request to the client and calls
 * the tool again itself ({@link askLegacyRounds}). On 2026-07-28: the call answers `input_required` with
 * the tool's requests and a `requestState` that seals the tool's state to this call (tool, API key,
 * agent session, arguments); the retry hands the tool the answers and its state.
 */

/** What the sealed `requestState` of a tool's own round carries. */
interface ToolState extends CallBinding {
  readonly k: 'tool';
  /** The tool's state, as it attached it. */
  readonly p?: unknown;
}

export function isToolState(state: unknown): state is ToolState {
  return typeof state === 'object' && state !== null && (state as { k?: unknown }).k === 'tool';
}

/** What a client can answer, by the capabilities it declared: the user (form elicitation), its model (sampling), its roots. */
export type ClientAnswers = Pick<ToolInputChannel, 'canAsk' | 'canSample' | 'canListRoots'>;

const isDeclared = (value: unknown) => typeof value === 'object' && value !== null;

/** What a client that declared `capabilities` can answer. */
export function clientAnswers(capabilities: ClientCapabilities | undefined): ClientAnswers {
  return {
    canAsk: canElicitForm(capabilities),
    canSample: isDeclared(capabilities?.sampling),
    canListRoots: isDeclared(capabilities?.roots),
  };
}

/** Whether a client that declared `capabilities` can be sent any request of a tool's (so its calls need the SDK's path). */
export function canBeAsked(capabilities: ClientCapabilities | undefined): boolean {
  return canElicitForm(capabilities) || isDeclared(capabilities?.sampling) || isDeclared(capabilities?.roots);
}

/** The capabilities a 2026-07-28 request declared in its envelope. */
export function declaredCapabilities(ctx: ServerContext): ClientCapabilities | undefined {
  return (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    ClientCapabilities | undefined;
}

/** The input channel a 2026-07-28 call gives its tool: what the client can answer, its answers, and the tool's verified state. */
export function inputChannel(ctx: ServerContext, state: ToolState | undefined, call: ModernCall): ToolInputChannel {
  if (state !== undefined) checkBinding(state, call);
  const responses = checkedInputResponses(ctx);
  return {
    ...clientAnswers(declaredCapabilities(ctx)),
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    responses: typeof responses === 'object' && responses !== null && !Array.isArray(responses) ? responses : {},
    ...(state === undefined || state.p === undefined ? {} : { state: state.p }),
  };
}

/**
 * 2026-07-28: a call whose tool needs the client's model or roots from a client that did not declare
 * them (the executor's SAMPLING_UNAVAILABLE, ROOTS_UNAVAILABLE) is the protocol's
 * MissingRequiredClientCapabilityError (-32021, HTTP 400), naming what to declare; undefined otherwise.
 */
export function missingCapability(
  result: InvokeResult<string>,
  capabilities: ClientCapabilities | undefined,
): MissingRequiredClientCapabilityError | undefined {
  if (result.successful) return undefined;
  const codes = new Set(result.errors.map((error) => error.code));
  const required: Record<string, object> = {};
  if (codes.has(ExecutionErrorCode.SAMPLING_UNAVAILABLE) && !isDeclared(capabilities?.sampling)) required.sampling = {};
  if (codes.has(ExecutionErrorCode.ROOTS_UNAVAILABLE) && !isDeclared(capabilities?.roots)) required.roots = {};
  if (Object.keys(required).length === 0) return undefined;
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: required as ClientCapabilities },
    `${InvokeResult.errorMessage(result)} Declare ${Object.keys(required).join(' and ')} in the request's io.modelcontextprotocol/clientCapabilities.`,
  );
}

/** The `input_required` answer for a tool's questions, its state sealed to this call. */
export async function askForInput(host: AptixHost, needed: ToolInputNeeded, call: ModernCall): Promise<CallToolResult> {
  const state: ToolState = {
    k: 'tool',
    ...bindingOf(call),
    ...(needed.state === undefined ? {} : { p: needed.state }),
  };
  const requestState = await requestStateCodec(host).mint(state);
  return inputRequired({
    inputRequests: needed.inputRequests as unknown as InputRequests,
    requestState,
  }) as unknown as CallToolResult;
}

/** What {@link inputChannel} gives a first call from a client that cannot be asked and sent no answers: made once. */
export const NO_INPUT: ToolInputChannel = Object.freeze({ canAsk: false, responses: Object.freeze({}) });

/** The channel a 2025-era call gives its tool when the client can be asked ({@link canBeAsked}): what it can answer, nothing answered yet. */
export function legacyFirstInput(capabilities: ClientCapabilities | undefined): ToolInputChannel {
  return { ...clientAnswers(capabilities), responses: {} };
}

/** How many rounds of questions one 2025-era call may ask before it is stopped. */
export const MAX_LEGACY_ROUNDS = 8;
/** How long the host waits for the user to answer one question (the approval question's longest wait). */
const LEGACY_ANSWER_TIMEOUT_MS = 600_000;

/** What asking a 2025-era client needs: what it can answer, its call's signal, and the session's one channel for server-to-client requests. */
export interface LegacyQuestions {
  readonly answers: ClientAnswers;
  readonly signal: AbortSignal;
  /** Claims the session's channel for server-to-client requests; false when another call holds it. */
  hold(): boolean;
  release(): void;
}

/** Where the rounds ended: the tool's last outcome, or an answer saying why the questions stopped. */
export type LegacyRounds<O> =
  { readonly kind: 'done'; readonly outcome: O } | { readonly kind: 'stopped'; readonly result: CallToolResult };

function stopped(text: string): { kind: 'stopped'; result: CallToolResult } {
  return { kind: 'stopped', result: { content: [{ type: 'text', text }], isError: true } };
}

/**
 * A tool's own requests on a 2025-era session whose client can be asked ({@link canBeAsked}): each
 * request goes to the client on the call's stream (a question as form-mode `elicitation/create`, a
 * `sampling/createMessage`, a `roots/list`), the answers (the client's results, keyed as the tool keyed
 * its requests, as a 2026-07-28 retry brings them) and the tool's state go back to the tool, until it
 * answers without asking or {@link MAX_LEGACY_ROUNDS} rounds have passed. The state stays in this
 * process, so it needs no seal. The executor has already refused a round the client cannot answer.
 */
export async function askLegacyRounds<O>(
  first: O,
  needs: (outcome: O) => ToolInputNeeded | undefined,
  again: (channel: ToolInputChannel) => Promise<O>,
  ask: LegacyQuestions,
  ctx: ServerContext,
): Promise<LegacyRounds<O>> {
  let outcome = first;
  for (let round = 1; ; round += 1) {
    const needed = needs(outcome);
    if (needed === undefined) return { kind: 'done', outcome };
    if (round > MAX_LEGACY_ROUNDS)
      return stopped(
        `The tool kept asking the user: it asked ${MAX_LEGACY_ROUNDS} rounds of questions (the limit for one call), so the call was stopped. Nothing more was asked.`,
      );
    if (ask.signal.aborted) return stopped('The call was cancelled while the tool was asking the user.');
    if (!ask.hold())
      return stopped(
        'The tool needs an answer from the client, and another request to the client is open in this MCP session, so it was not sent. Answer that one, then call the tool again.',
      );
    const responses: Record<string, unknown> = {};
    try {
      // One at a time, in the tool's order: a client answers a question to its user before the next comes.
      for (const [key, request] of Object.entries(needed.inputRequests)) {
        responses[key] = await ctx.mcpReq.send(legacyRequest(request), {
          timeout: LEGACY_ANSWER_TIMEOUT_MS,
          signal: ask.signal,
        });
      }
    } catch {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the await before it may have changed this; narrowing does not see across an await
      if (ask.signal.aborted) return stopped('The call was cancelled while the tool was asking the client.');
      return stopped(
        "The MCP client did not answer the tool's request (a question to the user, a completion " +
          'from its model or its roots: it failed, timed out or closed the stream), so the tool could ' +
          'not go on. Nothing was done after the request.',
      );
    } finally {
      ask.release();
    }
    outcome = await again({
      ...ask.answers,
      responses,
      ...(needed.state === undefined ? {} : { state: needed.state }),
    });
  }
}

/** A tool's request as the 2025 request the client is sent: a form question, a sampling request, or roots/list. */
function legacyRequest(request: ToolInputRequest): {
  method: ToolInputRequest['method'];
  params?: Record<string, unknown>;
} {
  if (request.method === 'elicitation/create')
    return { method: request.method, params: { mode: 'form', ...request.params } as Record<string, unknown> };
  if (request.method === 'sampling/createMessage')
    return { method: request.method, params: request.params as unknown as Record<string, unknown> };
  return { method: 'roots/list' };
}
