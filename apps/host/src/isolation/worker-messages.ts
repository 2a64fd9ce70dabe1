/**
 * What an isolated worker sends the host, read without trusting any of it: a call's result, progress
 * report or log entry, and the tools' operator log lines.
 */
import type { Logger } from 'pino';
import {
  ExecutionErrorCode,
  InvokeResult,
  TOOL_LOG_LEVELS,
  type AgentToolExecutionContext,
  type ToolLogLevel,
  type ToolProgress,
} from '@aptix/tool-contract';
import type { PoolWorker } from './pool-worker.js';
import { decodeCallMessage, type WorkerMessage } from './protocol.js';

/** A failed result as a worker sent it: its errors, which the executor cleans and bounds; anything unreadable is a malformed result. */
function failedFromWire(name: string, payload: string): InvokeResult<string> {
  try {
    const errors = JSON.parse(payload) as unknown;
    if (Array.isArray(errors)) return { successful: false, result: null, errors } as InvokeResult<string>;
  } catch {
    // below
  }
  return InvokeResult.fromError(`${name} returned a malformed result.`, ExecutionErrorCode.MALFORMED_RESULT);
}

/**
 * A failed result that asks the user, as a worker sent it: its errors and questions, which the host's
 * executor checks again (well formed, and only to a caller that can ask); anything unreadable is a
 * malformed result.
 */
function questionsFromWire(name: string, payload: string): InvokeResult<string> {
  try {
    const { errors, inputRequired } = JSON.parse(payload) as { errors?: unknown; inputRequired?: unknown };
    if (Array.isArray(errors) && inputRequired !== undefined)
      return { successful: false, result: null, errors, inputRequired } as unknown as InvokeResult<string>;
  } catch {
    // below
  }
  return InvokeResult.fromError(`${name} returned a malformed result.`, ExecutionErrorCode.MALFORMED_RESULT);
}

/** Hands a worker's report to the caller's function: malformed JSON, or a caller that throws, is dropped. */
function deliver(send: () => void): void {
  try {
    send();
  } catch {
    // A report is never a reason to fail a call.
  }
}

/** A progress report a worker sent for a call: to the caller's own function, which checks it again. */
function deliverProgress(context: AgentToolExecutionContext, payload: string): void {
  if (context.reportProgress !== undefined) deliver(() => context.reportProgress!(JSON.parse(payload) as ToolProgress));
}

/** A log entry a worker sent for a call: to the caller's own function, which checks it again. */
function deliverLog(context: AgentToolExecutionContext, payload: string): void {
  if (context.log === undefined) return;
  deliver(() => {
    const { level, message, data } = JSON.parse(payload) as { level?: unknown; message?: unknown; data?: unknown };
    if (typeof level === 'string' && (TOOL_LOG_LEVELS as readonly string[]).includes(level))
      context.log!(level as ToolLogLevel, String(message), data);
  });
}

/**
 * A worker's message about one of its calls: the call's result, or undefined once a progress report or
 * log entry went to its caller. Nothing in it is trusted: an id this worker was not sent, or that already
 * answered, is ignored (so nothing of a call reaches its caller after the result), and the result goes
 * through the executor's checks like any tool's; progress and log entries go to the caller's own
 * functions, which check them again.
 */
export function readCallMessage(
  entry: PoolWorker,
  wire: string,
): { id: number; result: InvokeResult<string> } | undefined {
  const message = decodeCallMessage(wire);
  if (message === undefined) return undefined;
  const pending = entry.pending.get(message.id);
  if (pending === undefined) return undefined;
  switch (message.kind) {
    case 'R':
      return { id: message.id, result: InvokeResult.create(message.payload) };
    case 'F':
      return { id: message.id, result: failedFromWire(pending.name, message.payload) };
    case 'I':
      return { id: message.id, result: questionsFromWire(pending.name, message.payload) };
    case 'P':
      deliverProgress(pending.context, message.payload);
      return undefined;
    case 'L':
      deliverLog(pending.context, message.payload);
      return undefined;
  }
}

/** An operator's log line from a worker (the tools' AdminLogger), tagged with the package; nothing in it trusted. */
export function logWorkerEntry(
  logger: Logger,
  specifier: string,
  message: Extract<WorkerMessage, { type: 'log' }>,
): void {
  const level = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'].includes(message.level) ? message.level : 'error';
  const fields: Record<string, unknown> = { toolPackage: specifier, tag: String(message.tag) };
  if (Array.isArray(message.pairs))
    for (const pair of message.pairs.slice(0, 32)) if (Array.isArray(pair)) fields[String(pair[0])] = String(pair[1]);
  logger[level](fields, String(message.message).slice(0, 8192));
}
