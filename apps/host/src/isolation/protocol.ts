/**
 * The messages between the host and an isolated package's worker threads. The host trusts none of
 * what a worker sends: every message is checked before it is used (see `worker-pool.ts`).
 */
import type {
  AgentToolExecutionContext,
  ApprovalPolicyKind,
  FunctionToolSchema,
  InvokeError,
  InvokeFailure,
  InvokeResult,
  JsonSchema,
  LogLevel,
  ToolAnnotations,
  ToolInputChannel,
} from '@aptix/tool-contract';
import type { IsolatedPromptMeta, IsolatedResourceMeta, UnitHostMessage, UnitWorkerMessage } from './unit-protocol.js';

/** What a worker is started with (its `workerData`). */
export interface WorkerSetup {
  readonly specifier: string;
  readonly baseDir: string;
  readonly options: Readonly<Record<string, unknown>>;
  readonly limitMs: number;
  readonly maxResultBytes: number;
  readonly maxErrorMessageLength: number;
  /** The most a worker may hold outside the V8 heap (Buffers, ArrayBuffers, external memory), in bytes. */
  readonly maxExternalBytes: number;
  /** The host's lock around V8's --expose-gc flag, shared by all its workers (see collector.ts); set by startWorker. */
  readonly collectorLock?: Int32Array;
}

/** A tool's static side, as the worker read it: what the host's proxy class declares. */
export interface IsolatedToolMeta {
  readonly name: string;
  readonly className: string;
  readonly usage: string;
  readonly schema: FunctionToolSchema;
  readonly timeoutMs: number | undefined;
  readonly annotations: ToolAnnotations | undefined;
  readonly fullyExecutedOnServer: boolean;
  /** The kind of the tool's approval policy; its function, if any, stays in the worker. */
  readonly approval: ApprovalPolicyKind;
  /** The declared OutputSchema (plain JSON): the host's registry checks it again, and its executor checks each result against it. */
  readonly outputSchema?: JsonSchema;
  /** The modes the class asks to join (its static `Modes`), as the worker read them; the host checks them again. */
  readonly modes?: readonly string[];
  /** Whether calls may run as MCP tasks (its static `TaskSupport`), and when a task's questions are asked (`TaskInput`). */
  readonly taskSupport?: 'optional' | 'required';
  readonly taskInput?: 'before';
}

/**
 * The rare messages from the host, as objects. A call itself goes as a string (see {@link encodeCall}):
 * structured-cloning one string costs less than an object of strings, on both sides. An object message
 * is sent after the strings queued before it, so a cancellation never overtakes its call.
 */
export type HostMessage =
  /** Evaluate a tool's approval policy for these arguments (JSON text) and context data (JSON text). */
  | {
      readonly type: 'policy';
      readonly id: number;
      readonly name: string;
      readonly args: string;
      readonly context: string;
    }
  | { readonly type: 'cancel'; readonly id: number; readonly timedOut: boolean }
  | { readonly type: 'ping'; readonly seq: number }
  | { readonly type: 'close' }
  /** The package's prompts and resources: render, read, complete, watch (see unit-protocol.ts). */
  | UnitHostMessage;

export type WorkerMessage =
  | { readonly type: 'phase'; readonly phase: 'import' | 'setup' }
  /** `changing`: the package took `toolsChanged` from its ToolPackageHost, so its tools may change while the host runs. */
  | {
      readonly type: 'ready';
      readonly name: string;
      readonly version: string | undefined;
      readonly folder: string;
      readonly tools: readonly IsolatedToolMeta[];
      readonly changing?: boolean;
      /** Its prompts and resources, as checked in the worker (the host checks them again). */
      readonly prompts?: readonly IsolatedPromptMeta[];
      readonly resources?: readonly IsolatedResourceMeta[];
    }
  /** The package's whole tool list after it changed (`toolsChanged`), as checked in the worker. */
  | { readonly type: 'tools'; readonly tools: readonly IsolatedToolMeta[] }
  | { readonly type: 'failed'; readonly message: string }
  /** A successful result with content blocks (plain data, structured-cloned); plain results go as strings. */
  | { readonly type: 'result'; readonly id: number; readonly result: InvokeResult<string> }
  | { readonly type: 'pong'; readonly seq: number }
  | { readonly type: 'policy'; readonly id: number; readonly required: boolean; readonly reason: string }
  | { readonly type: 'closed' }
  | UnitWorkerMessage
  /**
   * The worker found itself unfit to answer calls (see worker-health.ts): a package changed the built-ins
   * its protocol relies on, or it holds more than its limit outside the heap. `call`: the call whose end
   * found it (its result is not sent); `unstarted`: calls it refused to start; `running`: calls started
   * and not answered. The host sends every call of the worker's that is neither `call` nor `running` to
   * another worker: an unfit worker starts nothing more, so those never started there.
   */
  | {
      readonly type: 'unfit';
      readonly reason: 'polluted' | 'memory';
      readonly detail: string;
      readonly call?: number;
      readonly unstarted?: readonly number[];
      readonly running?: readonly number[];
    }
  | {
      readonly type: 'log';
      readonly level: LogLevel;
      readonly tag: string;
      readonly message: string;
      readonly pairs: ReadonlyArray<readonly [string, string]>;
    };

/*
 * The messages of a call, as strings: a kind letter and the call's id, a NUL, then the payload. Nothing
 * in front of the payload can hold a NUL (a tool name cannot, JSON text escapes it), and the payload is
 * last, so it is never escaped or copied into another string: a tool's result text crosses as it is.
 *
 *   host → worker   C<id>\0<flags>\0<tool name>\0<context JSON>\0<arguments JSON>
 *   worker → host   R<id>\0<result JSON text>          a successful result
 *                   F<id>\0<errors JSON>               a failed result: [{ message, code? }, …]
 *                   I<id>\0<questions JSON>            a failed result that asks the user: { errors, inputRequired }
 *                   P<id>\0<progress JSON>             { progress, total?, message? }
 *                   L<id>\0<log entry JSON>            { level, message, data? }
 *
 * Strings queued in the same turn of the event loop cross as one message, an array of them in order
 * (see outbox.ts); one alone crosses as a plain string.
 */

/** The caller listens to progress reports (`context.reportProgress`). */
export const WANTS_PROGRESS = 1;
/** The caller listens to log entries (`context.log`). */
export const WANTS_LOG = 2;

/** A call's message: the context's data only (its functions cannot cross; the flags say which to rebuild). */
export function encodeCall(id: number, name: string, args: string, context: AgentToolExecutionContext): string {
  const flags =
    (typeof context.reportProgress === 'function' ? WANTS_PROGRESS : 0) |
    (typeof context.log === 'function' ? WANTS_LOG : 0);
  return `C${id}\0${flags}\0${name}\0${contextData(context)}\0${args}`;
}

export interface DecodedCall {
  readonly id: number;
  readonly flags: number;
  readonly name: string;
  readonly context: AgentToolExecutionContext;
  readonly args: string;
}

/** Reads a call's message (in the worker; the host wrote it). */
export function decodeCall(wire: string): DecodedCall {
  const a = wire.indexOf('\0');
  const b = wire.indexOf('\0', a + 1);
  const c = wire.indexOf('\0', b + 1);
  const d = wire.indexOf('\0', c + 1);
  const contextJson = wire.slice(c + 1, d);
  return {
    id: Number(wire.slice(1, a)),
    flags: Number(wire.slice(a + 1, b)),
    name: wire.slice(b + 1, c),
    context: contextJson === '{}' ? {} : (JSON.parse(contextJson) as AgentToolExecutionContext),
    args: wire.slice(d + 1),
  };
}

/**
 * The context's fields that are plain values, as JSON, and the input channel of a call that may ask the
 * user (its answers and the tool's state are JSON data): functions and other objects stay behind.
 */
export function contextData(context: AgentToolExecutionContext): string {
  let out = '';
  for (const key of Object.keys(context)) {
    const value = (context as Record<string, unknown>)[key];
    if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      out += `${out === '' ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(value)}`;
    } else if (key === 'input' && typeof value === 'object') {
      const input = inputData(value as ToolInputChannel);
      if (input !== undefined) out += `${out === '' ? '' : ','}"input":${input}`;
    }
  }
  return `{${out}}`;
}

/**
 * The input channel as JSON: what the caller can answer (its user, model, roots), the answers, the tool's verified state. One
 * that cannot be written as JSON is left behind, so the tool is told nothing it could not be told in
 * process either: it then answers as a tool whose caller cannot ask.
 */
function inputData(input: ToolInputChannel): string | undefined {
  try {
    return JSON.stringify({
      canAsk: input.canAsk === true,
      canSample: input.canSample === true,
      canListRoots: input.canListRoots === true,
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      responses: input.responses ?? {},
      ...(input.state === undefined ? {} : { state: input.state }),
    });
  } catch {
    return undefined;
  }
}

export type CallMessageKind = 'R' | 'F' | 'I' | 'P' | 'L';

/** A worker's message about call `id`. */
export function encodeCallMessage(kind: CallMessageKind, id: number, payload: string): string {
  return `${kind}${id}\0${payload}`;
}

/** The failed result's errors as they cross (the host cleans them again). */
export function encodeErrors(errors: readonly InvokeError[]): string {
  return JSON.stringify(plainErrors(errors));
}

function plainErrors(errors: readonly InvokeError[]): Array<{ message: string; code?: string }> {
  return errors.map((error) =>
    error.code === undefined ? { message: error.message } : { message: error.message, code: error.code },
  );
}

/** A failed result's message: its kind and payload (`I` with the questions to the user, else `F`). */
export function encodeFailure(result: InvokeFailure): { kind: 'F' | 'I'; payload: string } {
  if (result.inputRequired === undefined) return { kind: 'F', payload: encodeErrors(result.errors) };
  // The worker's executor checked the questions (and that the caller can ask); the host checks them again.
  return {
    kind: 'I',
    payload: JSON.stringify({ errors: plainErrors(result.errors), inputRequired: result.inputRequired }),
  };
}

/**
 * Reads a worker's message about a call; undefined when it is not one. The host trusts nothing in it:
 * the id is looked up among the calls it sent, and the payload is checked by whoever reads it.
 */
export function decodeCallMessage(wire: string): { kind: CallMessageKind; id: number; payload: string } | undefined {
  const kind = wire[0];
  if (kind !== 'R' && kind !== 'F' && kind !== 'I' && kind !== 'P' && kind !== 'L') return undefined;
  const sep = wire.indexOf('\0');
  if (sep < 2 || sep > 17) return undefined;
  const id = Number(wire.slice(1, sep));
  return Number.isSafeInteger(id) ? { kind, id, payload: wire.slice(sep + 1) } : undefined;
}
