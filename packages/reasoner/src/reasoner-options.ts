import type { AgentSessionStore } from '@aptix/agent-sessions';
import type { AdminLogger, AgentToolExecutor, ToolFactory } from '@aptix/tool-contract';
import type { ModeCatalog } from '@aptix/tool-mode-catalog';
import type OpenAI from 'openai';
import type { ResponseCreateParamsBase } from 'openai/resources/responses/responses';
import type { ReasonerEventListener } from './events.js';
import type { ReasonerToolRegistry } from './tool-registry-view.js';
import type { ModelConnection } from './model-config.js';
import type { TurnApprovals } from './approvals.js';
import type { DeferredModes } from './deferred-modes.js';

/** Model calls per turn when `maxSteps` is not given. */
export const DEFAULT_MAX_STEPS = 12;

/** What the Reasoner needs of the session store: `AgentSessionStore` fits. */
export type ReasonerSessionStore = Pick<
  AgentSessionStore,
  'createSession' | 'getSession' | 'appendConversationItems' | 'listConversationItems'
>;

/**
 * Extra Responses API parameters sent with every model call (`temperature`, `max_output_tokens`,
 * `reasoning`, `parallel_tool_calls`, `include`…). The ones the Reasoner owns cannot be set here.
 * For OpenAI reasoning models, add `include: ['reasoning.encrypted_content']` so their reasoning can be
 * replayed statelessly.
 */
export type ModelSettings = Omit<
  ResponseCreateParamsBase,
  | 'model'
  | 'instructions'
  | 'input'
  | 'tools'
  | 'store'
  | 'stream'
  | 'previous_response_id'
  | 'conversation'
  | 'background'
>;

export interface ReasonerOptions {
  readonly registry: ReasonerToolRegistry;
  /** Runs the calls; never throws. */
  readonly executor: Pick<AgentToolExecutor, 'execute'>;
  readonly modeCatalog: ModeCatalog;
  readonly sessions: ReasonerSessionStore;
  /** The endpoint and the model. `model.model` is required; see {@link resolveModelConnection}. */
  readonly model: ModelConnection;
  /** A client built by the host (e.g. `new AzureOpenAI(...)`); then `model.baseURL`/`apiKey` are not used, `model.model` still is. */
  readonly client?: OpenAI;
  /**
   * The factory the executor builds tools with. The Reasoner builds each offered tool once, at start-up,
   * only to read `isToolFullyExecutedOnServer`. Default: `new ToolClass({ logger })`.
   */
  readonly createTool?: ToolFactory;
  /**
   * The tools a mode offers now, when the host's tools can change while it runs (a bridged MCP server
   * adds or removes some); undefined for a mode means the catalog's selection. The Reasoner builds its
   * mode prompts again whenever the registry's `revision` has moved since it last built them.
   */
  readonly offeredTools?: (modeKey: string) => readonly string[] | undefined;
  /**
   * Modes too large to list: `true` for every mode, or the keys of some. A deferred mode is offered
   * as `aptix_find_tools` (searches the session's current mode) and `aptix_call_tool` (runs one of its
   * tools, with every check of a direct call), beside `agent_list_modes` and `agent_change_mode`; its
   * instructions say how to find tools instead of holding every tool's guide. Default false.
   */
  readonly deferred?: DeferredModes;
  /** The opening of the instructions. Default {@link DEFAULT_BOOT_PROMPT}. */
  readonly bootPrompt?: string;
  /** Model calls per turn before it stops with `step_limit`. Default {@link DEFAULT_MAX_STEPS}. */
  readonly maxSteps?: number;
  /** Stream the model's responses (text deltas as they come). Default true; false for endpoints that cannot stream. */
  readonly stream?: boolean;
  readonly modelSettings?: ModelSettings;
  readonly logger?: AdminLogger;
}

export interface TurnOptions {
  /** Aborting stops the model call and the tools in flight; the turn then ends with `cancelled`. */
  readonly signal?: AbortSignal;
  /** Receives the turn's events as they happen (text deltas, tool calls, mode changes, the end). */
  readonly onEvent?: ReasonerEventListener;
  /** The tools' `conversationId` (AGN-005 §5). Default: the id of the session the turn is asked of. */
  readonly conversationId?: string;
  /** Approval gates: without them, no call is gated (see {@link TurnApprovals}). */
  readonly approvals?: TurnApprovals;
  /**
   * The logger of this turn: its own lines, the executor's and the tools' go there (a server passes one
   * that carries the request id). Default: the Reasoner's logger.
   */
  readonly logger?: AdminLogger;
}
