import type { InvokeResult } from '@aptix/tool-contract';
import type {
  EasyInputMessage,
  ResponseFunctionCallOutputItemList,
  ResponseInputItem,
} from 'openai/resources/responses/responses';

/**
 * The conversation a session stores: Responses API items, as JSON, in order. The user's messages and
 * the tool outputs are built here; the model's output items are stored exactly as the endpoint
 * returned them, and normalised only when they are sent back ({@link toModelInput}).
 */
export type ConversationItem = Record<string, unknown> & { readonly type: string };

/** A function call the model made, as the Reasoner reads it back from the conversation. */
export interface FunctionCall {
  readonly callId: string;
  readonly name: string;
  /** The arguments exactly as the model sent them: JSON text, possibly malformed. */
  readonly arguments: string;
}

/** A call to a client-executed tool that ended a turn and waits for the client's output. */
export interface PendingToolCall extends FunctionCall {
  /** The session holding the call: where the output must be submitted. */
  readonly sessionId: string;
  /** What the tool's server part returned (JSON text), for the client to finish the work with. */
  readonly serverResult: string;
}

/**
 * The Reasoner's own record that a call waits for the client. Kept in the conversation, so a restarted
 * host still knows; never sent to the model.
 */
export const PENDING_CALL_ITEM = 'aptix_pending_tool_call';

/**
 * The codes the Reasoner itself puts in the error payloads the model reads (tools add their own, e.g.
 * `INVALID_ARGUMENTS`, `DIVIDE_BY_ZERO`). Stable: models and transcripts depend on them.
 */
export const ToolOutputCode = {
  /** A failed result that carried no code of its own. */
  TOOL_FAILED: 'TOOL_FAILED',
  /** The model called a tool the session's mode does not offer when the call was to run; it was not run. */
  TOOL_NOT_OFFERED: 'TOOL_NOT_OFFERED',
  /** The session could not be read when the call was to run (gone, or the store failed); the call was not run. */
  SESSION_UNAVAILABLE: 'SESSION_UNAVAILABLE',
  /** The host stopped while the call ran (a crash or a restart); it may or may not have taken effect. */
  CALL_INTERRUPTED: 'CALL_INTERRUPTED',
  /** A client-executed call that was waiting when the session branched; it continues in the new session. */
  MOVED_TO_BRANCH: 'MOVED_TO_BRANCH',
  /** The client reported that it could not complete a client-executed call. */
  CLIENT_TOOL_FAILED: 'CLIENT_TOOL_FAILED',
  /** `aptix_find_tools` or `aptix_call_tool` named another session than the conversation's; nothing ran. */
  SESSION_MISMATCH: 'SESSION_MISMATCH',
} as const;
export type ToolOutputCode = (typeof ToolOutputCode)[keyof typeof ToolOutputCode];

export function userMessageItem(text: string): ConversationItem {
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] };
}

/** `output` is JSON text, or, for a result with content blocks, the Responses API's list of input items (see `toolOutputContent`). */
export function functionCallOutputItem(
  callId: string,
  output: string | ResponseFunctionCallOutputItemList,
): ConversationItem {
  return { type: 'function_call_output', call_id: callId, output };
}

export function pendingCallItem(call: FunctionCall, serverResult: string): ConversationItem {
  return { type: PENDING_CALL_ITEM, call_id: call.callId, name: call.name, server_result: serverResult };
}

/** The text a model reads for a tool error: `{"error":{"message","code"}}` (AGN-005 §9). */
export function errorPayload(message: string, code: string = ToolOutputCode.TOOL_FAILED): string {
  return JSON.stringify({ error: { message, code } });
}

/** The `output` of a `function_call_output` for a tool result: the result JSON, or the error payload. */
export function toolOutputText(result: InvokeResult<string>): string {
  if (result.successful) return result.result;
  const message = result.errors.map((error) => error.message).join(' ') || 'The tool failed without saying why.';
  return errorPayload(message, result.errors.find((error) => error.code !== undefined)?.code);
}

/** The function calls among a response's output items, in output order. */
export function functionCallsOf(output: readonly unknown[]): FunctionCall[] {
  const calls: FunctionCall[] = [];
  for (const item of output) {
    if (
      isRecord(item) &&
      item.type === 'function_call' &&
      typeof item.call_id === 'string' &&
      typeof item.name === 'string'
    ) {
      calls.push({
        callId: item.call_id,
        name: item.name,
        arguments: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}),
      });
    }
  }
  return calls;
}

/** The visible text of a response's output: its messages' text (and refusals), in order. */
export function textOf(output: readonly unknown[]): string {
  const parts: string[] = [];
  for (const item of output) {
    if (isRecord(item) && item.type === 'message' && item.role === 'assistant') parts.push(messageText(item.content));
  }
  return parts.filter((part) => part !== '').join('\n\n');
}

/** What a stored conversation says about its calls: those answered, those waiting for the client, those cut off. */
export interface ConversationState {
  /** Calls without an output that a client must answer, in call order. */
  readonly pending: ReadonlyArray<FunctionCall & { readonly serverResult: string }>;
  /** Calls without an output and without a pending record: the host stopped while it ran them. */
  readonly interrupted: readonly FunctionCall[];
}

export function inspectConversation(items: readonly unknown[]): ConversationState {
  const calls = new Map<string, FunctionCall>();
  const answered = new Set<string>();
  const waiting = new Map<string, string>();
  for (const item of items) {
    if (!isRecord(item) || typeof item.call_id !== 'string') continue;
    if (item.type === 'function_call') {
      const [call] = functionCallsOf([item]);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      if (call) calls.set(call.callId, call);
    } else if (item.type === 'function_call_output') {
      answered.add(item.call_id);
    } else if (item.type === PENDING_CALL_ITEM) {
      waiting.set(item.call_id, typeof item.server_result === 'string' ? item.server_result : 'null');
    }
  }
  const pending: Array<FunctionCall & { serverResult: string }> = [];
  const interrupted: FunctionCall[] = [];
  for (const call of calls.values()) {
    if (answered.has(call.callId)) continue;
    const serverResult = waiting.get(call.callId);
    if (serverResult === undefined) interrupted.push(call);
    else pending.push({ ...call, serverResult });
  }
  return { pending, interrupted };
}

/**
 * The stored conversation as the `input` of a stateless request (`store: false`). Ids of output items
 * are left out: with `store: false` the endpoint keeps nothing an id could point to, and OpenAI refuses
 * ids it cannot find. Reasoning items are sent back only when they carry `encrypted_content` (ask for it
 * with `include: ['reasoning.encrypted_content']`); without it they cannot be replayed.
 */
export function toModelInput(items: readonly unknown[]): ResponseInputItem[] {
  const input: ResponseInputItem[] = [];
  for (const item of items) {
    if (!isRecord(item) || typeof item.type !== 'string') continue;
    switch (item.type) {
      case PENDING_CALL_ITEM:
        break;
      case 'function_call': {
        const [call] = functionCallsOf([item]);
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
        if (call)
          input.push({ type: 'function_call', call_id: call.callId, name: call.name, arguments: call.arguments });
        break;
      }
      case 'function_call_output':
        input.push({
          type: 'function_call_output',
          call_id: String(item.call_id),
          // A list of input items (a result with content blocks) is sent as it was stored.
          output:
            typeof item.output === 'string'
              ? item.output
              : Array.isArray(item.output)
                ? (item.output as ResponseFunctionCallOutputItemList)
                : JSON.stringify(item.output),
        });
        break;
      case 'message':
        if (item.role === 'assistant') {
          const message: EasyInputMessage = { type: 'message', role: 'assistant', content: messageText(item.content) };
          // Newer models mark commentary and final answers; OpenAI asks for the phase to be sent back.
          if (item.phase === 'commentary' || item.phase === 'final_answer') message.phase = item.phase;
          input.push(message);
        } else {
          input.push(item as unknown as ResponseInputItem);
        }
        break;
      case 'reasoning':
        if (typeof item.encrypted_content === 'string' && item.encrypted_content !== '') {
          input.push({
            type: 'reasoning',
            id: String(item.id),
            summary: Array.isArray(item.summary) ? item.summary : [],
            encrypted_content: item.encrypted_content,
          } as ResponseInputItem);
        }
        break;
      default:
        input.push(item as unknown as ResponseInputItem);
    }
  }
  return input;
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => {
      if (!isRecord(part)) return '';
      if (
        (part.type === 'output_text' || part.type === 'input_text' || part.type === 'text') &&
        typeof part.text === 'string'
      )
        return part.text;
      if (part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
      return '';
    })
    .join('');
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
