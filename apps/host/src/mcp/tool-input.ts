import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequests,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { ToolInputChannel, ToolInputNeeded } from '@aptix/tool-contract';
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
 * A tool's own questions to the user (`InvokeResult.inputRequired`). On 2025 revisions the host asks
 * with `elicitation/create` and calls the tool again itself ({@link askLegacyRounds}). On 2026-07-28: the call answers
 * `input_required` with the tool's questions and a `requestState` that seals the tool's state to this
 * call (tool, API key, agent session, arguments); the retry hands the tool the answers and its state.
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

/** The input channel a 2026-07-28 call gives its tool: whether the client can be asked, its answers, and the tool's verified state. */
export function inputChannel(ctx: ServerContext, state: ToolState | undefined, call: ModernCall): ToolInputChannel {
  if (state !== undefined) checkBinding(state, call);
  const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    ClientCapabilities | undefined;
  const responses = checkedInputResponses(ctx);
  return {
    canAsk: canElicitForm(capabilities),
    responses: typeof responses === 'object' && responses !== null && !Array.isArray(responses) ? responses : {},
    ...(state === undefined || state.p === undefined ? {} : { state: state.p }),
  };
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

/** The channel a 2025-era call gives its tool when the client declared form elicitation: it may ask, nothing answered yet. */
export const LEGACY_FIRST_INPUT: ToolInputChannel = Object.freeze({ canAsk: true, responses: Object.freeze({}) });

/** How many rounds of questions one 2025-era call may ask before it is stopped. */
export const MAX_LEGACY_ROUNDS = 8;
/** How long the host waits for the user to answer one question (the approval question's longest wait). */
const LEGACY_ANSWER_TIMEOUT_MS = 600_000;

/** What asking a 2025-era client needs: its call's signal, and the session's one channel for a question to the user. */
export interface LegacyQuestions {
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
 * A tool's own questions on a 2025-era session whose client declared form elicitation: each question
 * goes as `elicitation/create` (form mode) on the call's stream, the answers (the client's
 * `{ action, content }`, keyed as the tool keyed its questions, as a 2026-07-28 retry brings them) and
 * the tool's state go back to the tool, until it answers without asking or {@link MAX_LEGACY_ROUNDS}
 * rounds have passed. The state stays in this process, so it needs no seal.
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
        'The tool needs an answer from the user, and another question to the user is open in this MCP session, so it was not asked. Answer that one, then call the tool again.',
      );
    const responses: Record<string, unknown> = {};
    try {
      for (const [key, request] of Object.entries(needed.inputRequests)) {
        responses[key] = await ctx.mcpReq.send(
          {
            method: 'elicitation/create',
            params: { mode: 'form', ...request.params } as unknown as Record<string, unknown>,
          },
          { timeout: LEGACY_ANSWER_TIMEOUT_MS, signal: ask.signal },
        );
      }
    } catch {
      if (ask.signal.aborted) return stopped('The call was cancelled while the tool was asking the user.');
      return stopped(
        'The MCP client did not answer the question to the user (it failed, timed out or closed the stream), so the tool could not go on. Nothing was done after the question.',
      );
    } finally {
      ask.release();
    }
    outcome = await again({ canAsk: true, responses, ...(needed.state === undefined ? {} : { state: needed.state }) });
  }
}
