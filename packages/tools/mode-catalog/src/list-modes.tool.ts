import {
  functionToolSchema,
  InvokeResult,
  TypedAgentTool,
  usage,
  type AgentToolExecutionContext,
  type DecodedArguments,
  type LogPairs,
  type RunOutput,
  type ToolDependencies,
} from '@aptix/tool-contract';
import { Type, type Static } from 'typebox';
import type { AgentModeCatalogService, AgentModeSummary } from './mode-summary.js';

const Args = Type.Object(
  {
    includeExamples: Type.Optional(
      Type.Boolean({
        description:
          'When true, each mode also lists exampleUtterances: sample user requests that belong to it. Omit it, or send false, for a shorter answer.',
      }),
    ),
  },
  { additionalProperties: false },
);
type ListModesArgs = Static<typeof Args>;

/** The dependencies the host injects (awilix resolves them by these names). */
export interface ListModesToolDependencies extends ToolDependencies {
  readonly modeCatalog: AgentModeCatalogService;
}

/** One entry of the result's `modes`: TUL-010 §3.3, in camelCase. */
export interface ModeDescriptor {
  readonly id: string;
  readonly key: string;
  readonly displayName: string;
  readonly description: string;
  readonly systemPromptSummary: string;
  readonly isDefault: boolean;
  readonly humanRoleHints: readonly string[];
  /** Present only when `includeExamples` was true. */
  readonly exampleUtterances?: readonly string[];
  /** The tools the mode adds to the always-offered agent_list_modes and agent_change_mode. */
  readonly tools: readonly string[];
}

/** The successful result: `{ modes: [...] }` and nothing else (TUL-010 §3.3). */
export interface ListModesResult {
  readonly modes: readonly ModeDescriptor[];
}

/** The codes on this tool's own failed results. Stable: a code is never renamed or reused. */
export const ListModesErrorCode = {
  /** The catalog threw, or answered with something other than a list of modes. */
  CATALOG_UNAVAILABLE: 'CATALOG_UNAVAILABLE',
} as const;

/** AGN-005 §6.1's tag, under which every failure of the tool is logged. */
const EXCEPTION_TAG = '[agent_list_modes_ExecuteAsync__Exception]';

const CATALOG_UNAVAILABLE_MESSAGE =
  'agent_list_modes could not read the mode catalog, so no modes can be listed right now. Do not guess the modes; tell the user the list is unavailable.';

/**
 * `agent_list_modes` (TUL-010): lists the configured agent modes so the model can explain them and
 * offer a choice before proposing a mode change. Read-only and idempotent: it never changes a
 * session, a mode or the catalog, and the same catalog always gives the same answer.
 *
 * @example
 * const tool = new ListModesTool({ logger, modeCatalog: await loadModeCatalog() });
 * const result = await tool.execute('{"includeExamples":true}', context);
 */
export class ListModesTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'agent_list_modes';
  static readonly ToolAnnotations = { readOnlyHint: true, idempotentHint: true };
  static readonly ToolUsageMetadata = usage`
    agent_list_modes — Usage Guide

    Primary purpose:
    - List the agent modes this assistant can work in: each mode's key, display name, description,
      how prompts treat it, whether it is the default, the human roles it suits and the tools it adds.
    - Informational only: it never changes the current mode, the session or the catalog.

    Rules:
    - Call it when the user asks which modes exist, or wants help understanding or choosing a mode.
    - Call it before proposing a mode change, to present the options and their descriptions.
    - Do not call it on every user message.
    - Do not call it when you already know which mode fits and need not present options.
    - It is not a substitute for agent_change_mode: listing modes never switches mode. To switch,
      propose the mode, get the user's explicit confirmation, then call agent_change_mode with the mode's key.
    - Safe to repeat: the same catalog gives the same answer.

    Arguments:
    - includeExamples (optional boolean): true adds exampleUtterances, sample requests that belong to
      each mode; useful when helping the user choose. Omit it for a shorter answer.

    Result:
    - { "modes": [ { "id", "key", "displayName", "description", "systemPromptSummary", "isDefault",
      "humanRoleHints", "tools", and "exampleUtterances" when includeExamples is true } ].
    - Use "key" when you call agent_change_mode; show "displayName" to the user.

    Error codes:
    - CATALOG_UNAVAILABLE: the mode catalog could not be read. Say that the list is unavailable; do not invent modes.
    - INVALID_ARGUMENTS: the arguments were not a JSON object, or includeExamples was not a boolean.
    - TOOL_EXCEPTION: the tool failed unexpectedly. Say that the list is unavailable; do not invent modes.
    - TIMEOUT: the catalog did not answer within the host's time-out. Say that the list is unavailable; you may try once more.
    - A successful result with "wasCancelled": true: the caller cancelled the call; no modes were read.

    Good usage:
    - User: "What modes do you have?" → agent_list_modes {}
    - User: "Which mode should I use to write a design record?" → agent_list_modes {"includeExamples": true}

    Bad usage:
    - Calling agent_list_modes at the start of every turn "just in case".
    - Calling agent_list_modes to switch modes (use agent_change_mode after the user confirms).
  `;

  static getSchema() {
    return functionToolSchema(
      ListModesTool.ToolName,
      'Lists the available agent modes with their keys, descriptions and default flag (read-only). Use it to explain or compare modes before proposing a mode change; it never changes the mode.',
      Args,
    );
  }

  readonly #catalog: AgentModeCatalogService;

  constructor(dependencies: ListModesToolDependencies) {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (dependencies === null || typeof dependencies !== 'object')
      throw new TypeError('ListModesTool requires its dependencies: { logger, modeCatalog }.');
    super(Args, dependencies.logger);
    const { modeCatalog } = dependencies;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (modeCatalog === null || typeof modeCatalog !== 'object' || typeof modeCatalog.getAllModes !== 'function') {
      throw new TypeError('ListModesTool requires a modeCatalog: an AgentModeCatalogService with getAllModes().');
    }
    this.#catalog = modeCatalog;
  }

  /** No argument is required, so a call with no arguments at all (an empty string) means `{}`. */
  protected override decode(input: unknown, context: AgentToolExecutionContext): DecodedArguments<ListModesArgs> {
    const blank = input === null || input === undefined || (typeof input === 'string' && input.trim() === '');
    return super.decode(blank ? '{}' : input, context);
  }

  protected override failureMessage(): string {
    return 'agent_list_modes failed to list the modes.';
  }

  protected async run(
    { includeExamples = false }: ListModesArgs,
    context: AgentToolExecutionContext,
    signal: AbortSignal,
  ): Promise<RunOutput> {
    let modes: readonly AgentModeSummary[] | null | undefined;
    try {
      modes = await this.#catalog.getAllModes(signal);
    } catch (error) {
      if (signal.aborted) return cancelled(context);
      // AGN-005 §6.1: the standard tag, so a filter on `_ExecuteAsync__Exception` finds catalog failures too.
      this.logger.addException(EXCEPTION_TAG, error, pairs(context));
      return InvokeResult.fromError(CATALOG_UNAVAILABLE_MESSAGE, ListModesErrorCode.CATALOG_UNAVAILABLE);
    }
    if (!Array.isArray(modes)) {
      this.logger.addError(
        EXCEPTION_TAG,
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
        `The mode catalog's getAllModes() returned ${modes === null ? 'null' : typeof modes} instead of a list of modes.`,
        pairs(context),
      );
      return InvokeResult.fromError(CATALOG_UNAVAILABLE_MESSAGE, ListModesErrorCode.CATALOG_UNAVAILABLE);
    }
    const result: ListModesResult = { modes: modes.map((mode) => toDescriptor(mode, includeExamples)) };
    return result;
  }
}

function toDescriptor(mode: AgentModeSummary, includeExamples: boolean): ModeDescriptor {
  const descriptor: ModeDescriptor = {
    id: mode.id,
    key: mode.key,
    displayName: mode.displayName,
    description: mode.description,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    systemPromptSummary: mode.systemPromptSummary ?? '',
    isDefault: mode.isDefault === true,
    // A service other than ModeCatalog may hand back null (TUL-010 §2 allows it): the wire always has an array.
    humanRoleHints: mode.humanRoleHints ?? [],
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    tools: mode.tools ?? [],
  };
  return includeExamples ? { ...descriptor, exampleUtterances: mode.exampleUtterances ?? [] } : descriptor;
}

/** AGN-005 §8: a call the caller cancelled is a successful result that says so. */
function cancelled(context: AgentToolExecutionContext): object {
  return {
    wasCancelled: true,
    message: 'agent_list_modes was cancelled before the modes were read.',
    sessionId: context.sessionId ?? null,
    conversationId: context.conversationId ?? null,
  };
}

function pairs(context: AgentToolExecutionContext): LogPairs {
  return [
    ['SessionId', context.sessionId ?? ''],
    ['ConversationId', context.conversationId ?? ''],
  ];
}
