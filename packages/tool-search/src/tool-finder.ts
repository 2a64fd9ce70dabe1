import type { JsonSchema } from '@aptix/tool-contract';
import { CALL_TOOL, DEFAULT_FIND_LIMIT, type FindToolsArguments } from './meta-tools.js';
import { ToolSearchIndex, type SearchableTool } from './tool-search-index.js';

/** A tool as the finder offers it: what the index reads, and the parameters a call must match. */
export interface FindableTool extends SearchableTool {
  readonly parameters: JsonSchema;
}

/** One tool in a find's answer: everything a model needs to call it through {@link CALL_TOOL}. */
export interface FoundTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly usage: string;
}

/** What `aptix_find_tools` answers (its result's JSON). */
export interface FindToolsResult {
  /** The mode searched: the session's current mode, or the default mode without a session. */
  readonly mode: string;
  readonly sessionId: string | null;
  readonly query: string | null;
  /** How many tools the mode offers in all. */
  readonly total: number;
  readonly tools: readonly FoundTool[];
  /** What to do next, for the model: how to call a tool found, or how to look further. */
  readonly next: string;
}

/**
 * The tools of one mode, searchable. Build one per mode and set of tools and keep it: the index is
 * made on the first query (a mode listed in order never builds it).
 */
export class ToolFinder {
  #index: ToolSearchIndex | undefined;
  readonly #byName: ReadonlyMap<string, FindableTool>;

  constructor(
    readonly mode: string,
    private readonly tools: readonly FindableTool[],
  ) {
    this.#byName = new Map(tools.map((tool) => [tool.name, tool]));
  }

  /**
   * The tools that fit `query` best (or the mode's first tools without one), with what to do next.
   * `visible` narrows the mode to the tools the caller may use (a principal's permissions): the others
   * are neither answered nor counted.
   */
  find(args: FindToolsArguments, sessionId: string | null, visible?: (name: string) => boolean): FindToolsResult {
    const limit = args.limit ?? DEFAULT_FIND_LIMIT;
    const query = args.query?.trim() || null;
    const usable = visible === undefined ? this.tools : this.tools.filter((tool) => visible(tool.name));
    const names =
      query === null
        ? usable.slice(0, limit).map((tool) => tool.name)
        : (this.#index ??= new ToolSearchIndex(this.tools)).search(query, limit, visible);
    const tools = names.map((name) => found(this.#byName.get(name)!));
    return {
      mode: this.mode,
      sessionId,
      query,
      total: usable.length,
      tools,
      next: nextStep(tools, usable.length, query, sessionId),
    };
  }
}

function found(tool: FindableTool): FoundTool {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    usage: tool.usageMetadata ?? '',
  };
}

function nextStep(tools: readonly FoundTool[], total: number, query: string | null, sessionId: string | null): string {
  const session = sessionId === null ? '' : `, "sessionId": "${sessionId}"`;
  if (tools.length === 0) {
    return query === null
      ? 'This mode offers no tools. Use agent_list_modes to see the modes, and agent_change_mode to switch.'
      : `No tool of this mode matches "${query}". Try other words, leave the query out to list the mode's tools, or switch to another mode (agent_list_modes lists them).`;
  }
  const more =
    tools.length < total
      ? ` These are ${tools.length} of the mode's ${total} tools${query === null ? '' : ', best match first'}; search with other words to see others.`
      : '';
  return `Call one with ${CALL_TOOL} {"name": "<tool>", "arguments": {…}${session}}, arguments matching its parameters.${more}`;
}
