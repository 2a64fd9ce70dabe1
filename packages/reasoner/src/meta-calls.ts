/**
 * How a call of `aptix_find_tools` or `aptix_call_tool` is read. A call tool call becomes the call of
 * the tool it names, which then goes the way of a direct call (mode check, approval gate, executor);
 * the find tool is answered from the session's current mode.
 */
import { ExecutionErrorCode, InvokeResult } from '@aptix/tool-contract';
import {
  CALL_TOOL,
  FIND_TOOLS,
  isMetaTool,
  readCallArguments,
  readFindArguments,
  type FindToolsArguments,
} from '@aptix/tool-search';
import { ToolOutputCode, type FunctionCall } from './conversation.js';
import { sessionMismatchMessage } from './deferred-modes.js';

/**
 * What a model's call comes to: a tool to run (the call itself, or the tool `aptix_call_tool` names,
 * with `via` set), a search, or an answer at once (arguments refused; nothing runs).
 */
export type CallTarget =
  | { readonly kind: 'run'; readonly name: string; readonly arguments: string; readonly via?: typeof CALL_TOOL }
  | { readonly kind: 'find'; readonly args: FindToolsArguments }
  | { readonly kind: 'answer'; readonly result: InvokeResult<string> };

/** Reads a call; `sessionId` is the conversation's session, which a meta call may name but never change. */
export function targetOf(call: FunctionCall, sessionId: string): CallTarget {
  if (call.name !== FIND_TOOLS && call.name !== CALL_TOOL)
    return { kind: 'run', name: call.name, arguments: call.arguments };
  const raw = parseLoosely(call.arguments);
  const read = call.name === FIND_TOOLS ? readFindArguments(raw) : readCallArguments(raw);
  if (!read.ok) return answer(read.message, ExecutionErrorCode.INVALID_ARGUMENTS);
  const given = read.value.sessionId;
  if (given !== undefined && given !== sessionId)
    return answer(sessionMismatchMessage(call.name, given, sessionId), ToolOutputCode.SESSION_MISMATCH);
  if (call.name === FIND_TOOLS) return { kind: 'find', args: read.value as FindToolsArguments };
  const { name, arguments: args } = read.value as { name: string; arguments?: Record<string, unknown> };
  if (isMetaTool(name))
    return answer(
      `Invalid arguments for ${CALL_TOOL}: 'name' must name a tool of the mode, not ${name}; call ${name} directly.`,
      ExecutionErrorCode.INVALID_ARGUMENTS,
    );
  return { kind: 'run', name, arguments: JSON.stringify(args ?? {}), via: CALL_TOOL };
}

/** The model's JSON text as a value; text that is not JSON stays text, for the reader to refuse with its own message. */
function parseLoosely(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function answer(message: string, code: string): CallTarget {
  return { kind: 'answer', result: InvokeResult.fromError(message, code) };
}
