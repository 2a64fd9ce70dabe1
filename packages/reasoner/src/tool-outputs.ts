import {
  errorPayload,
  functionCallOutputItem,
  isRecord,
  ToolOutputCode,
  type ConversationItem,
  type FunctionCall,
} from './conversation.js';
import { ReasonerError, ReasonerErrorCode } from './reasoner-error.js';

/** The client's answer to a pending call: its output (JSON text or any JSON value), or why it failed. */
export type ToolOutputSubmission =
  | { readonly callId: string; readonly output: unknown }
  | { readonly callId: string; readonly error: { readonly message: string; readonly code?: string } };

/** The conversation items answering pending calls, after checking each answer names one. */
export function submissionItems(
  sessionId: string,
  outputs: readonly ToolOutputSubmission[],
  pending: readonly FunctionCall[],
): { items: ConversationItem[]; answered: Set<string> } {
  const waiting = new Map(pending.map((call) => [call.callId, call]));
  const answered = new Set<string>();
  const items: ConversationItem[] = [];
  const waitingFor = () =>
    pending.length === 0
      ? 'It is waiting for no tool calls.'
      : `It is waiting for: ${pending.map((call) => `${call.callId} (${call.name})`).join(', ')}.`;
  outputs.forEach((entry, index) => {
    if (!isRecord(entry) || typeof entry.callId !== 'string' || entry.callId === '') {
      throw new ReasonerError(
        ReasonerErrorCode.INVALID_INPUT,
        `Tool output ${index} has no callId: give each output the callId of the pending call it answers.`,
      );
    }
    const { callId } = entry;
    if (!waiting.has(callId))
      throw new ReasonerError(
        ReasonerErrorCode.UNKNOWN_TOOL_CALL,
        `Session ${sessionId} is not waiting for tool call "${callId}". ${waitingFor()}`,
      );
    if (answered.has(callId))
      throw new ReasonerError(
        ReasonerErrorCode.INVALID_INPUT,
        `Tool call "${callId}" is answered twice in one submission: send one output per call.`,
      );
    const hasOutput = 'output' in entry && entry.output !== undefined;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    const hasError = 'error' in entry && entry.error !== undefined;
    if (hasOutput === hasError) {
      throw new ReasonerError(
        ReasonerErrorCode.INVALID_INPUT,
        `Tool output for "${callId}" must have exactly one of "output" (the result) or "error" ({ "message": "..." }).`,
      );
    }
    let text: string;
    if (hasError) {
      const error = (entry as { error: unknown }).error;
      if (!isRecord(error) || typeof error.message !== 'string' || error.message.trim() === '') {
        throw new ReasonerError(
          ReasonerErrorCode.INVALID_INPUT,
          `The error for tool call "${callId}" needs a non-empty "message" saying why the client could not complete it.`,
        );
      }
      text = errorPayload(
        error.message,
        typeof error.code === 'string' && error.code !== '' ? error.code : ToolOutputCode.CLIENT_TOOL_FAILED,
      );
    } else {
      const output = (entry as { output: unknown }).output;
      const serialised = typeof output === 'string' ? output : JSON.stringify(output);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, a function or a symbol, whatever its declared type says
      if (serialised === undefined)
        throw new ReasonerError(
          ReasonerErrorCode.INVALID_INPUT,
          `The output for tool call "${callId}" is not JSON data: send a string or a JSON value.`,
        );
      text = serialised;
    }
    answered.add(callId);
    items.push(functionCallOutputItem(callId, text));
  });
  return { items, answered };
}
