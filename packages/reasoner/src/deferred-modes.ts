/**
 * Deferred modes (issue 31): instead of a mode's whole tool list, the model is offered the mode tools
 * and the `aptix_find_tools` / `aptix_call_tool` pair of `@aptix/tool-search`, and its instructions
 * hold no per-tool guides. For modes too large to list.
 */
import { ALWAYS_OFFERED_TOOLS, type ModeCatalog } from '@aptix/tool-mode-catalog';
import { CALL_TOOL, FIND_TOOLS, ToolFinder } from '@aptix/tool-search';
import type { ReasonerToolRegistry } from './instructions.js';
import { ReasonerError, ReasonerErrorCode } from './reasoner-error.js';

/** The `deferred` option: `true` defers every mode, an array the modes it names. */
export type DeferredModes = boolean | readonly string[];

/**
 * Which modes are deferred, checked against the catalog: a key it does not hold stops start-up, since
 * a misspelt key would silently list a mode of a thousand tools.
 * @throws {ReasonerError} `INVALID_OPTION`.
 */
export function deferredModeKeys(option: DeferredModes | undefined, catalog: ModeCatalog): ReadonlySet<string> {
  if (option === undefined || option === false) return new Set();
  if (option === true) return new Set(catalog.keys);
  if (!Array.isArray(option) || option.some((key) => typeof key !== 'string')) {
    throw new ReasonerError(ReasonerErrorCode.INVALID_OPTION, `deferred must be true, false or an array of mode keys; got ${JSON.stringify(option)}.`);
  }
  const unknown = option.filter((key) => !catalog.keys.includes(key));
  if (unknown.length > 0) {
    throw new ReasonerError(ReasonerErrorCode.INVALID_OPTION, `deferred names mode(s) ${unknown.map((key) => `"${key}"`).join(', ')}, which mode catalog ${catalog.source} does not have (modes: ${catalog.keys.join(', ')}).`);
  }
  return new Set(option);
}

/** The tools a deferred mode still sends in full: the mode tools it offers (`agent_list_modes`, `agent_change_mode`). */
export function directTools(toolNames: readonly string[]): string[] {
  return toolNames.filter((name) => (ALWAYS_OFFERED_TOOLS as readonly string[]).includes(name));
}

/** The finder over a mode's tools: what `aptix_find_tools` searches. */
export function finderFor(registry: ReasonerToolRegistry, mode: string, toolNames: readonly string[]): ToolFinder {
  return new ToolFinder(
    mode,
    toolNames.map((name) => {
      const tool = registry.get(name)!;
      return { name, description: tool.description, usageMetadata: tool.usageMetadata, parameters: tool.parameters };
    }),
  );
}

/** The section of a deferred mode's instructions that stands in for its tools' guides. */
export function findingToolsSection(total: number): string {
  return [
    '# Finding tools',
    `This mode offers ${total} tools that are not listed to you. Find the ones a task needs with ${FIND_TOOLS} (describe the task in a few words; ` +
      `it answers each tool's parameters and usage guide), then run one with ${CALL_TOOL} {"name": "<tool>", "arguments": {…}}, following its guide.`,
  ].join('\n');
}

/**
 * The refusal of a tool the session's deferred mode does not offer. It cannot list a thousand tools, so
 * it says what this model can do: search the mode, or change to a mode that offers the tool (`offeredIn`).
 */
export function deferredToolNotInModeMessage(tool: string, mode: string, sessionId: string, offeredIn: readonly string[]): string {
  const search = `Find this mode's tools with ${FIND_TOOLS}.`;
  if (offeredIn.length === 0) return `There is no tool "${tool}" in any mode; nothing was run. ${search}`;
  return (
    `Tool "${tool}" is not offered in mode "${mode}" (session ${sessionId}); it was not run. ${search} ` +
    `"${tool}" is offered in mode ${offeredIn.map((key) => `"${key}"`).join(', ')}: switch with agent_change_mode once the user agrees, then call it again.`
  );
}

/** The refusal of a meta tool in a mode whose tools are listed in full (the session moved to it since the model was asked). */
export function metaToolNotOfferedMessage(tool: string, mode: string, offered: readonly string[]): string {
  return `${tool} is not offered in mode "${mode}": this mode's tools are listed to you directly (${offered.join(', ')}). Call them by name.`;
}

/** The refusal of a meta-tool call that names another session than the conversation's. */
export function sessionMismatchMessage(tool: string, given: string, sessionId: string): string {
  return `${tool} was not run: it names session "${given}", but this conversation works in session ${sessionId}. Leave sessionId out: calls run in the conversation's session.`;
}
