/**
 * The messages between the host and an isolated package's worker threads. The host trusts none of
 * what a worker sends: every message is checked before it is used (see `worker-pool.ts`).
 */
import type { AgentToolExecutionContext, FunctionToolSchema, InvokeResult, JsonSchema, LogLevel, ToolAnnotations } from '@aptix/tool-contract';

/** What a worker is started with (its `workerData`). */
export interface WorkerSetup {
  readonly specifier: string;
  readonly baseDir: string;
  readonly options: Readonly<Record<string, unknown>>;
  readonly limitMs: number;
  readonly maxResultBytes: number;
  readonly maxErrorMessageLength: number;
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
  /** The declared OutputSchema (plain JSON): the host's registry checks it again, and its executor checks each result against it. */
  readonly outputSchema?: JsonSchema;
}

export type HostMessage =
  | { readonly type: 'call'; readonly id: number; readonly name: string; readonly args: string; readonly context: AgentToolExecutionContext }
  | { readonly type: 'cancel'; readonly id: number; readonly timedOut: boolean }
  | { readonly type: 'ping'; readonly seq: number }
  | { readonly type: 'close' };

export type WorkerMessage =
  | { readonly type: 'phase'; readonly phase: 'import' | 'setup' }
  | { readonly type: 'ready'; readonly name: string; readonly version: string | undefined; readonly folder: string; readonly tools: readonly IsolatedToolMeta[] }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'result'; readonly id: number; readonly result: InvokeResult<string> }
  | { readonly type: 'pong'; readonly seq: number }
  | { readonly type: 'closed' }
  | { readonly type: 'log'; readonly level: LogLevel; readonly tag: string; readonly message: string; readonly pairs: ReadonlyArray<readonly [string, string]> };
