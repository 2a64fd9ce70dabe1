/**
 * Deferred modes (issue 31): instead of a mode's whole tool list, the model is offered the mode tools
 * and the `aptix_find_tools` / `aptix_call_tool` pair of `@aptix/tool-search`, and its instructions
 * hold no per-tool guides. For modes too large to list.
 */
import { ALWAYS_OFFERED_TOOLS, type ModeCatalog } from '@aptix/tool-mode-catalog';
import { ToolFinder } from '@aptix/tool-search';
import type { ReasonerToolRegistry } from './tool-registry-view.js';
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
    throw new ReasonerError(
      ReasonerErrorCode.INVALID_OPTION,
      `deferred must be true, false or an array of mode keys; got ${JSON.stringify(option)}.`,
    );
  }
  const unknown = option.filter((key) => !catalog.keys.includes(key));
  if (unknown.length > 0) {
    throw new ReasonerError(
      ReasonerErrorCode.INVALID_OPTION,
      `deferred names mode(s) ${unknown.map((key) => `"${key}"`).join(', ')}, which mode catalog ${catalog.source} does not have (modes: ${catalog.keys.join(', ')}).`,
    );
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

export {
  deferredToolNotInModeMessage,
  findingToolsSection,
  metaToolNotOfferedMessage,
  sessionMismatchMessage,
} from '@aptix/tool-search';
