import type { AgentSessionManager } from '@aptix/agent-sessions';
import type { AdminLogger, JsonSchema, PromptList, ResourceList } from '@aptix/tool-contract';
import type { ModeCatalog } from '@aptix/tool-mode-catalog';
import type { DeferredModes } from './deferred-tools.js';
import type { ToolSource } from './tool-sources.js';

/** The agent session whose mode decides which tools are offered, and where `agent_change_mode` writes. */
export interface AptixSessionScope {
  /** Any `AgentSessionManager`: the SQLite or PostgreSQL store of `@aptix/agent-sessions`. */
  readonly sessionManager: AgentSessionManager;
  readonly sessionId: string;
  /** The mode catalog the store was opened with: each mode's tools, and `agent_list_modes`'s answer. */
  readonly modeCatalog: ModeCatalog;
}

export interface AptixToolsOptions {
  /** Tool classes and tool packages (`import * as samples from '@aptix/tool-samples'`), in the order they are offered. */
  readonly tools: readonly ToolSource[];
  /** The AdminLogger every tool is built with; contract violations are logged to it too. Default: silent. */
  readonly logger?: AdminLogger;
  /** More constructor dependencies by name; they win over the adapter's and the packages' own. */
  readonly dependencies?: Readonly<Record<string, unknown>>;
  /** Work in an agent session: offer its current mode's tools, and give the mode tools its store. */
  readonly session?: AptixSessionScope;
  /** Put in every call's context (AGN-005 §5: tools echo it in their results). */
  readonly conversationId?: string;
  /** The time-out of a call whose tool sets none. Default 30 000 ms (the executor's). */
  readonly defaultTimeoutMs?: number;
  /**
   * Modes too large to list: `true` for every mode (every tool, without a session), or the keys of
   * some. A deferred mode is offered as `aptix_find_tools` (searches the session's current mode) and
   * `aptix_call_tool` (runs one of its tools, exactly as a direct call), beside the mode tools; its
   * guidance says how to find tools instead of holding every guide. Default false.
   */
  readonly deferred?: DeferredModes;
  /**
   * Prompts and resources of your own (`definePrompt`, `defineResource`), beside those the tool packages
   * bring (their `prompts` and `resources` exports and what their `createUnits` makes). Checked by the
   * contract's registries like the host checks them; offered through `aptix.units`.
   */
  readonly prompts?: PromptList;
  readonly resources?: ResourceList;
  /** The time limit of one render, read or completion. Default 10 000 ms (the contract's). */
  readonly unitTimeoutMs?: number;
}

/** How a framework should describe one tool to its model. */
export interface ToolDescription {
  readonly name: string;
  readonly description: string;
  /** Aptix's parameters: the strict-mode view when `strict` is true, the declared schema otherwise. */
  readonly parameters: JsonSchema;
  /** Whether strict mode can take this tool (Aptix's strict-mode report, or the tool's own `strict: false`). */
  readonly strict: boolean;
  readonly usageMetadata: string;
}

/** Options of one call. */
export interface CallOptions {
  /** The framework's signal: its abort stops the tool. */
  readonly signal?: AbortSignal | undefined;
  /** A person approved this call through the framework's own approval step (the Agents SDK's `needsApproval`). */
  readonly approved?: boolean;
}
