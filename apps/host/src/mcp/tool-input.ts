import { CLIENT_CAPABILITIES_META_KEY, inputRequired, type CallToolResult, type ClientCapabilities, type InputRequests, type ServerContext } from '@modelcontextprotocol/server';
import type { ToolInputChannel, ToolInputNeeded } from '@aptix/tool-contract';
import type { AptixHost } from '../aptix-host.js';
import { bindingOf, canElicitForm, checkBinding, requestStateCodec, type CallBinding, type ModernCall } from './approval-elicitation.js';

/**
 * A tool's own questions to the user (`InvokeResult.inputRequired`) on 2026-07-28: the call answers
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
  const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  const responses = ctx.mcpReq.inputResponses;
  return {
    canAsk: canElicitForm(capabilities),
    responses: typeof responses === 'object' && responses !== null && !Array.isArray(responses) ? responses : {},
    ...(state === undefined || state.p === undefined ? {} : { state: state.p }),
  };
}

/** The `input_required` answer for a tool's questions, its state sealed to this call. */
export async function askForInput(host: AptixHost, needed: ToolInputNeeded, call: ModernCall): Promise<CallToolResult> {
  const state: ToolState = { k: 'tool', ...bindingOf(call), ...(needed.state === undefined ? {} : { p: needed.state }) };
  const requestState = await requestStateCodec(host).mint(state);
  return inputRequired({ inputRequests: needed.inputRequests as unknown as InputRequests, requestState }) as unknown as CallToolResult;
}
