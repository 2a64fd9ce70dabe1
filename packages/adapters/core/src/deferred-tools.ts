/**
 * Deferred modes in the adapters (issue 31): a mode offered as `aptix_find_tools` and
 * `aptix_call_tool` (from `@aptix/tool-search`) beside the mode tools, instead of its whole tool list.
 * What is particular to the two meta tools lives here; a call through `aptix_call_tool` goes back to
 * `AptixTools.call`, the path of a direct call.
 */
import { ExecutionErrorCode, InvokeResult, type AgentToolRegistry, type JsonSchema } from '@aptix/tool-contract';
import { ALWAYS_OFFERED_TOOLS, type ModeCatalog } from '@aptix/tool-mode-catalog';
import {
  CALL_TOOL,
  FIND_TOOLS,
  isMetaTool,
  metaToolDefinitions,
  readCallArguments,
  readFindArguments,
  ToolFinder,
  type CallToolArguments,
  type FindToolsArguments,
} from '@aptix/tool-search';
import { AdapterSetupError } from './tool-sources.js';

/** The `deferred` option: `true` defers every mode (every tool, without a session), an array the modes it names. */
export type DeferredModes = boolean | readonly string[];

/** The two meta tools, in the order they are offered. */
export const META_TOOLS: readonly string[] = Object.freeze([FIND_TOOLS, CALL_TOOL]);

/** What the finder reports as the mode searched when the adapter works without a session: every tool. */
export const ALL_TOOLS = 'all';

/** How the model should describe a meta tool (the declared view for a non-strict request, the strict one otherwise). */
export interface MetaToolDescription {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly strict: boolean;
}

/** A meta tool's arguments, read, or a failure to answer at once. */
export type MetaArguments =
  | { readonly find: FindToolsArguments }
  | { readonly call: CallToolArguments }
  | { readonly failure: InvokeResult<string> };

/**
 * Which modes are deferred, and a finder per mode, built on first use and kept (the adapter's tools
 * do not change once it is made).
 */
export class Deferral {
  readonly #modes: ReadonlySet<string> | 'every';
  readonly #finders = new Map<string, ToolFinder>();

  private constructor(modes: ReadonlySet<string> | 'every') {
    this.#modes = modes;
  }

  /**
   * The option checked: mode keys the catalog lacks, or keys without a session, stop the adapter's creation.
   * @throws {AdapterSetupError}
   */
  static of(option: DeferredModes | undefined, catalog: ModeCatalog | undefined): Deferral | undefined {
    if (option === undefined || option === false) return undefined;
    if (option === true) return new Deferral('every');
    if (!Array.isArray(option) || option.some((key) => typeof key !== 'string'))
      throw new AdapterSetupError(
        `deferred must be true, false or an array of mode keys; got ${JSON.stringify(option)}.`,
      );
    if (catalog === undefined)
      throw new AdapterSetupError(
        'deferred names modes, but the adapter has no session. Fix: give `session`, or pass deferred: true to offer every tool through aptix_find_tools.',
      );
    const unknown = option.filter((key) => !catalog.keys.includes(key));
    if (unknown.length > 0)
      throw new AdapterSetupError(
        `deferred names mode(s) ${unknown.map((key) => `"${key}"`).join(', ')}, which mode catalog ${catalog.source} does not have (modes: ${catalog.keys.join(', ')}).`,
      );
    return new Deferral(new Set(option));
  }

  /** Whether `mode` (`undefined`: no session) is offered through the meta tools. */
  covers(mode: string | undefined): boolean {
    return this.#modes === 'every' || (mode !== undefined && this.#modes.has(mode));
  }

  /**
   * The tools a framework is handed, the meta tools first: with every mode deferred, only they and the
   * mode tools (no other tool is ever offered directly); otherwise every tool after them.
   */
  names(registered: readonly string[]): string[] {
    return [...META_TOOLS, ...(this.#modes === 'every' ? directTools(registered) : registered)];
  }

  /** What the model is offered in a deferred mode whose tools are `modeTools`. */
  offered(modeTools: readonly string[]): string[] {
    return [...META_TOOLS, ...directTools(modeTools)];
  }

  describe(name: string, strictMode: boolean): MetaToolDescription {
    const index = META_TOOLS.indexOf(name);
    const wire = metaToolDefinitions('responses')[index]!;
    const strict = strictMode && wire.strict === true;
    return {
      name,
      description: wire.description,
      parameters: strict ? wire.parameters : metaToolDefinitions('mcp')[index]!.inputSchema,
      strict,
    };
  }

  /** The finder over the tools of `mode` (or of every tool, `ALL_TOOLS`). */
  finder(registry: AgentToolRegistry, mode: string, toolNames: readonly string[]): ToolFinder {
    let finder = this.#finders.get(mode);
    if (finder === undefined) {
      const tools = toolNames.map((name) => {
        const tool = registry.get(name)!;
        return { name, description: tool.description, usageMetadata: tool.usageMetadata, parameters: tool.parameters };
      });
      finder = new ToolFinder(mode, tools);
      this.#finders.set(mode, finder);
    }
    return finder;
  }
}

/** The mode tools among `names`: a deferred mode still offers them directly, with their guides. */
export function directTools(names: readonly string[]): string[] {
  return names.filter((name) => (ALWAYS_OFFERED_TOOLS as readonly string[]).includes(name));
}

/**
 * A meta tool's arguments as the framework gave them (an object, or JSON text), read and checked:
 * a field that is wrong, another session than `sessionId`, or a meta tool named as the tool to call
 * is a failure naming it.
 */
export function readMetaArguments(
  name: string,
  args: unknown,
  sessionId: string | undefined,
  mismatchCode: string,
): MetaArguments {
  const raw = typeof args === 'string' ? parseLoosely(args) : args;
  const read = name === FIND_TOOLS ? readFindArguments(raw) : readCallArguments(raw);
  if (!read.ok) return { failure: InvokeResult.fromError(read.message, ExecutionErrorCode.INVALID_ARGUMENTS) };
  const given = read.value.sessionId;
  if (given !== undefined && given !== sessionId) {
    const works =
      sessionId === undefined ? 'this agent works without a session' : `this agent works in session ${sessionId}`;
    return {
      failure: InvokeResult.fromError(
        `${name} was not run: it names session "${given}", but ${works}. Leave sessionId out: calls run in the agent's session.`,
        mismatchCode,
      ),
    };
  }
  if (name === FIND_TOOLS) return { find: read.value };
  const call = read.value as CallToolArguments;
  if (isMetaTool(call.name)) {
    return {
      failure: InvokeResult.fromError(
        `Invalid arguments for ${CALL_TOOL}: 'name' must name a tool of the mode, not ${call.name}; call ${call.name} directly.`,
        ExecutionErrorCode.INVALID_ARGUMENTS,
      ),
    };
  }
  return { call };
}

function parseLoosely(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export { deferredToolNotInModeMessage, findingToolsSection, metaToolNotOfferedMessage } from '@aptix/tool-search';
