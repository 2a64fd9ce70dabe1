import type { AdminLogger } from './admin-logger.js';
import type { FunctionToolSchema, ObjectSchemaLike } from './schema.js';
import type { InvokeResult } from './invoke-result.js';
import type { ApprovalPolicy } from './approval.js';
import type { AgentToolExecutionContext } from './execution-context.js';
import type { PromptList } from './prompt.js';
import type { ResourceList } from './resource.js';

// The call's context lives in a module of its own, so that approval.ts (a policy reads it) is not imported back.
export type { AgentToolExecutionContext, ToolLogLevel, ToolProgress } from './execution-context.js';

/** How a tool's calls may run as MCP tasks; `'forbidden'` when the tool declares nothing. */
export type TaskSupport = 'optional' | 'required';

/**
 * When a task's questions to the user (`InvokeResult.inputRequired`) are asked: `'during'` (the call is
 * a task at once; its questions park the task until `tasks/update` brings the answers) or `'before'`
 * (the call asks in `input_required` rounds on `tools/call` first, and the round that brings the
 * answers becomes the task).
 */
export type TaskInput = 'before' | 'during';

/** What a package's `createUnits` returns: prompts and resources beside its tools. */
export interface PackageUnits {
  readonly prompts?: PromptList;
  readonly resources?: ResourceList;
}

/** The instance side of a tool (the records' `IAgentTool`). */
export interface AgentTool {
  /** Equals the class's `ToolName`. */
  readonly name: string;
  /** False when the client, not the server, completes the call (the Reasoner then ends the turn with a pending call). */
  readonly isToolFullyExecutedOnServer: boolean;
  /** Runs one call. Never throws: every failure is a failed InvokeResult. */
  execute(
    argumentsJson: string,
    context: AgentToolExecutionContext,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>>;
}

/** MCP-style hints a tool may declare about its behaviour. */
export interface ToolAnnotations {
  readonly readOnlyHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** The dependencies every tool receives; hosts add theirs (a session manager, a catalog…). */
export interface ToolDependencies {
  readonly logger: AdminLogger;
}

/**
 * The static side of a tool: what the registry reads without building an instance.
 * A class missing any member fails to compile where it is registered or listed.
 */
export interface AgentToolClass<TDeps = never> {
  new (dependencies: TDeps): AgentTool;
  /** lowercase_snake_case, at most 64 characters, the `name` inside `getSchema()`. */
  readonly ToolName: string;
  /** LLM-facing guidance, AGN-005 §7.2; the Reasoner puts it in the system prompt. */
  readonly ToolUsageMetadata: string;
  /** The OpenAI function-tool schema; deterministic. */
  getSchema(): FunctionToolSchema;
  /** Optional: this tool's own time-out in milliseconds (the executor's default is 30 s). */
  readonly TimeoutMs?: number;
  /**
   * Optional: whether a call may run as an MCP task (long calls, the `io.modelcontextprotocol/tasks`
   * extension): `'optional'` (a client that supports tasks gets one, others wait for the result) or
   * `'required'` (only clients that support tasks may call it). Default: never as a task.
   */
  readonly TaskSupport?: TaskSupport;
  /**
   * Optional, with `TaskSupport`: `'before'` when the tool asks its questions before its long work, so a
   * client answers them on `tools/call` and gets a task for the round that brings the answers. Default
   * `'during'`: the call is a task at once, and a question parks it.
   */
  readonly TaskInput?: TaskInput;
  /** Optional: MCP hints (`readOnlyHint`, `idempotentHint`, …). */
  readonly ToolAnnotations?: ToolAnnotations;
  /** Optional: whether a call waits for a person's approval: `'always'`, `'never'` (the default), or a function of the validated arguments. */
  readonly ApprovalPolicy?: ApprovalPolicy;
  /**
   * Optional: the modes whose sessions offer this tool, by mode key (`['general']`). A host adds the tool
   * to each of these modes of its catalog; a mode the host does not have is skipped with a warning.
   */
  readonly Modes?: readonly string[];
  /**
   * Optional: a JSON Schema of the result (an object schema, e.g. `Type.Object(...)`). Every successful
   * result is then checked against it (a mismatch fails with OUTPUT_SCHEMA_MISMATCH and nothing is sent),
   * MCP lists it as `outputSchema` and sends the result as `structuredContent` beside the text.
   */
  readonly OutputSchema?: ObjectSchemaLike;
  /**
   * Optional, for a tool that implements `execute(argumentsJson, context, signal)` itself: `true`
   * promises that `execute` lets go of `signal` when its promise settles (it keeps no reference and
   * leaves no listener on it, as the MCP SDK's request does). The executor then hands it an AbortSignal
   * of a previous call that was never aborted, instead of making one per call (about 2 µs on Node 20,
   * more than the rest of the executor's work). Cancellation and time-outs abort it as any other.
   */
  readonly ReleasesSignal?: boolean;
}

/** Any tool class, whatever its dependencies: what registries and tool packages hold. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyAgentToolClass = AgentToolClass<any>;

/**
 * Types a package's tool list, so each entry is checked against the static side at compile time.
 * @example export const tools = [HelloWorldTool, CalculatorTool] as const satisfies ToolList;
 */
export type ToolList = readonly AnyAgentToolClass[];

/** What a host hands a tool package's `createDependencies` and `createTools`. */
export interface ToolPackageHost {
  readonly logger: AdminLogger;
  /**
   * The package's own settings from the host's configuration (`{ "package": "…", "options": { … } }`
   * in `toolPackages`); `{}` when none are given. Plain JSON: a package checks what it reads.
   */
  readonly options: Readonly<Record<string, unknown>>;
  /**
   * For a package whose tools change while the host runs (a bridged MCP server adds, removes or
   * changes tools): call it with the package's whole tool list as it is now. The host checks each new
   * class against the contract as at start-up (a class that fails is logged with the reason and not
   * offered; the rest are), offers it in the modes its class declares, stops offering the classes no
   * longer listed, and tells its MCP clients. Absent when the host cannot follow changes (a package
   * run in worker isolation): the package then keeps its start-up classes. Reading it tells the host
   * the package's tools may change: MCP 2026-07-28 listings then promise no caching.
   */
  readonly toolsChanged?: (tools: ToolList) => void;
  /**
   * For a package whose prompts or resources change while the host runs (a bridged MCP server sends
   * `notifications/prompts/list_changed` or `notifications/resources/list_changed`): call it with the
   * package's whole list of the kind that changed, as `createUnits` returns them; a kind left out
   * (`{ prompts }` alone) stays as it is. One hook for both kinds, not one each: it takes the shape
   * `createUnits` returns, so a package reports what it would have returned at start-up, and a change
   * that touches both kinds (a prompt that names a resource) is applied in one step. The host applies
   * a list in one synchronous step, checked against the contract as at start-up: a unit that fails is
   * logged with the reason and not offered (the rest are); a name or URI another package (or the host)
   * holds is refused the same way; a unit no longer listed stops being offered, and a get or read of it
   * says so; MCP clients are told (`list_changed`). Give the same object for a unit that did not change:
   * a new object is a new definition (a watched resource's subscription then moves to its `subscribe`).
   * Absent when the host cannot follow changes (a package run in worker isolation): the package then
   * keeps its start-up units. Reading it tells the host the package's units may change: its MCP
   * capabilities then declare `listChanged` for prompts and resources.
   */
  readonly unitsChanged?: (units: PackageUnits) => void;
}

/**
 * The module shape of a tool package: its `tools`, and optionally the dependencies its tools need
 * that the host does not provide, by constructor-parameter name. Tool packages never see the host's
 * container: they return plain values, and the host registers them.
 *
 * @example
 * export const tools = [WeatherTool] as const satisfies ToolList;
 * export const createDependencies: ToolPackage['createDependencies'] = () => ({ weatherClient: new WeatherClient() });
 */
export interface ToolPackage {
  readonly tools: ToolList;
  /** Prompts beside the tools (see `definePrompt`), checked like tools when the package loads. */
  readonly prompts?: PromptList;
  /** Resources beside the tools (see `defineResource`), checked like tools when the package loads. */
  readonly resources?: ResourceList;
  /** Must return a plain object; the host gives it a time limit (`startupTimeoutMs`). */
  readonly createDependencies?: (host: ToolPackageHost) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /**
   * Tools known only at start-up (discovered from a server, generated from `host.options`), added to
   * the static `tools`. Called once, after `createDependencies`, under the same time limit; its tools
   * are checked against the contract like the static ones.
   */
  readonly createTools?: (host: ToolPackageHost) => ToolList | Promise<ToolList>;
  /**
   * Prompts and resources known only at start-up (a bridged server's), added to the static `prompts`
   * and `resources`. Called once, after `createTools` and with the same `host`, under the same time
   * limit; its units are checked against the contract like the static ones.
   */
  readonly createUnits?: (host: ToolPackageHost) => PackageUnits | Promise<PackageUnits>;
  /**
   * Ends what `createDependencies` and `createTools` started (connections, child processes), when the
   * host stops. Called once per configured entry of the package, so it must be safe to call twice.
   */
  readonly close?: () => void | Promise<void>;
}
