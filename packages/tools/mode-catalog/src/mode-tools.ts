import type { AgentToolRegistry } from '@aptix/tool-contract';
import { ModeCatalogError, ModeCatalogErrorCode, type ModeCatalogIssue } from './mode-catalog-error.js';
import { unknownModeError, type ModeCatalog } from './mode-catalog.js';
import type { AgentModeSummary } from './mode-summary.js';

/**
 * The tools every mode offers, whatever its `tools` say, so the model can always see the modes and
 * leave the one it is in (TUL-007 §3.1: mode filtering must never hide `agent_change_mode`).
 * Named here rather than imported, so this package does not depend on `@aptix/tool-mode-change`.
 */
export const ALWAYS_OFFERED_TOOLS = Object.freeze(['agent_list_modes', 'agent_change_mode'] as const);

/** The package that provides each always-offered tool: a host must load both, whatever else it loads. */
export const ALWAYS_OFFERED_TOOL_PACKAGES: Readonly<Record<(typeof ALWAYS_OFFERED_TOOLS)[number], string>> =
  Object.freeze({
    agent_list_modes: '@aptix/tool-mode-catalog',
    agent_change_mode: '@aptix/tool-mode-change',
  });

/** What the selection needs of a registry: `AgentToolRegistry` fits, and so does a test double. */
export type ToolNameLookup = Pick<AgentToolRegistry, 'has' | 'names'>;

/** A catalog, or just its modes (from any `AgentModeCatalogService`, after `await getAllModes()`). */
export type ModeList = ModeCatalog | readonly AgentModeSummary[];

const IN_MEMORY = '(in-memory catalog)';

/**
 * The names of the tools to offer the model in a mode: the mode's own `tools` in catalog order, then
 * {@link ALWAYS_OFFERED_TOOLS}, each name once. A fresh array on every call, computed from the frozen
 * catalog, so repeated calls never accumulate anything (the C# original appended the always-on tools
 * to the mode's own list on every turn) and changing the returned array changes nothing else.
 *
 * Hand the result to `registry.definitions(format, names)` to get the model-facing definitions.
 *
 * It throws rather than returning a result: an unknown mode key or an unregistered tool is a host
 * misconfiguration (the session store only accepts catalog modes, and {@link checkCatalogAgainstRegistry}
 * runs at start-up), not something a model can fix.
 *
 * @throws {ModeCatalogError} `UNKNOWN_MODE` listing the valid keys; `UNREGISTERED_TOOL` naming the mode and the tool.
 * @example
 * const names = toolNamesForMode(registry, catalog, session.mode);
 * const tools = registry.definitions('responses', names);
 */
export function toolNamesForMode(registry: ToolNameLookup, catalog: ModeList, modeKey: string): string[] {
  const { modes, source } = unpack(catalog);
  const modeIndex = modes.findIndex((candidate) => candidate.key === modeKey);
  if (modeIndex === -1)
    throw unknownModeError(
      modeKey,
      modes.map((candidate) => candidate.key),
      source,
    );
  const issues = unregisteredTools(registry, modes, modeIndex);
  if (issues.length > 0) throw unregistered(registry, source, issues);
  return [...new Set<string>([...modes[modeIndex]!.tools, ...ALWAYS_OFFERED_TOOLS])];
}

/** What {@link toolNotInModeMessage} needs: the tool asked for, the session and its mode at the moment the call was to run. */
export interface ToolNotInMode {
  readonly tool: string;
  readonly mode: string;
  readonly sessionId: string;
  /** The tools the mode offers (see {@link toolNamesForMode}). */
  readonly offered: readonly string[];
}

/**
 * The one refusal every surface gives (HTTP, MCP, the CLI, the agent loop, the adapters) when a tool
 * is called in a session whose mode does not offer it. The mode is read when the call is to run, so it
 * may differ from the mode the caller's tool list was made for: the message says to list the tools
 * again, since a client that caches its tool list keeps showing the old mode's tools.
 *
 * @example toolNotInModeMessage({ tool: 'testing_delay', mode: 'general', sessionId: session.id, offered })
 */
export function toolNotInModeMessage({ tool, mode, sessionId, offered }: ToolNotInMode): string {
  return (
    `Tool "${tool}" is not offered in mode "${mode}" (session ${sessionId}); it was not run. Tools in this mode: ${offered.join(', ')}. ` +
    "The session's mode may have changed since the tools were listed: list the tools again before calling one. " +
    `To use "${tool}", switch to a mode that offers it with agent_change_mode.`
  );
}

/**
 * The start-up check: every tool a mode names, and every always-offered tool, is in the registry.
 * Collects every problem before throwing, so one run shows them all.
 *
 * @throws {ModeCatalogError} `UNREGISTERED_TOOL`, e.g. `mode "general" offers "web_search", which is not registered`.
 * @example
 * registry.registerTools([...samples.tools, ...modeCatalog.tools, ...modeChange.tools]);
 * checkCatalogAgainstRegistry(registry, catalog); // before the host starts listening
 */
export function checkCatalogAgainstRegistry(registry: ToolNameLookup, catalog: ModeList): void {
  const { modes, source } = unpack(catalog);
  const issues = unregisteredTools(registry, modes);
  if (issues.length > 0) throw unregistered(registry, source, issues);
}

/** The tools of every mode (or of the mode at `only`), and the always-offered ones, that the registry lacks. */
function unregisteredTools(
  registry: ToolNameLookup,
  modes: readonly AgentModeSummary[],
  only?: number,
): ModeCatalogIssue[] {
  const issues: ModeCatalogIssue[] = [];
  const named = new Set<string>();
  modes.forEach((mode, modeIndex) => {
    if (only !== undefined && modeIndex !== only) return;
    mode.tools.forEach((name, toolIndex) => {
      named.add(name);
      if (!registry.has(name))
        issues.push({
          path: `$.modes[${modeIndex}].tools[${toolIndex}]`,
          problem: `mode ${JSON.stringify(mode.key)} offers ${JSON.stringify(name)}, which is not registered`,
        });
    });
  });
  for (const name of ALWAYS_OFFERED_TOOLS) {
    if (!registry.has(name) && !(only !== undefined && named.has(name))) {
      issues.push({
        path: '(always offered)',
        problem: `${JSON.stringify(name)} is offered in every mode, so the model can always see and change modes, but it is not registered (it comes from ${ALWAYS_OFFERED_TOOL_PACKAGES[name]})`,
      });
    }
  }
  return issues;
}

function unpack(catalog: ModeList): { modes: readonly AgentModeSummary[]; source: string } {
  return 'modes' in catalog ? { modes: catalog.modes, source: catalog.source } : { modes: catalog, source: IN_MEMORY };
}

function unregistered(registry: ToolNameLookup, source: string, issues: readonly ModeCatalogIssue[]): ModeCatalogError {
  const listed = issues.map((issue) => issue.problem).join('; ');
  return new ModeCatalogError(
    ModeCatalogErrorCode.UNREGISTERED_TOOL,
    `Mode catalog ${source} names tools that are not registered: ${listed}. Registered tools: ${registry.names().join(', ') || 'none'}. ` +
      `Fix: add the tool package that provides each tool to toolPackages, or remove the tool from the mode. ` +
      `Every mode also offers ${ALWAYS_OFFERED_TOOLS.map((tool) => `${tool} (from ${ALWAYS_OFFERED_TOOL_PACKAGES[tool]})`).join(' and ')}: keep both packages in toolPackages.`,
    { source, issues },
  );
}
