import type { AgentToolRegistry } from '@aptix/tool-contract';
import {
  ALWAYS_OFFERED_TOOLS,
  checkCatalogAgainstRegistry,
  composeModeCatalog,
  defaultCatalogPath,
  loadModeCatalog,
  MODE_KEY_PATTERN,
  toolsInNoMode,
  type ComposedModeCatalog,
  type ModeCatalogExtension,
} from '@aptix/tool-mode-catalog';
import type { AptixConfig } from './config.js';
import { closest } from './http/validation-messages.js';
import type { LoadedToolPackage } from './tool-packages.js';

const MODE_KEY = new RegExp(MODE_KEY_PATTERN);

/** The composed catalog, and the tools its modes name that no package offers yet. */
export interface HostCatalog extends ComposedModeCatalog {
  /** Names a live package (a bridged server) may offer later; empty when there is no live package. */
  readonly awaited: readonly string[];
}

/**
 * The host's mode catalog: the configured catalog file (or the shipped one), plus the modes the
 * configuration adds, plus the modes each tool class asks to join (`static Modes`), plus the tools the
 * configuration adds to modes. Then every mode's tools are checked against the registry.
 *
 * Warnings, not errors: a tool package joining a mode this host does not have, and a tool that no mode
 * offers (served over HTTP, MCP and the CLI, but never offered to a model in a session).
 *
 * A mode may name a tool no package offers at start-up only when a package can add tools while the
 * host runs (`livePackages`: a bridged MCP server that lists more tools later). Each such name is a
 * warning, and the modes offer it once that package does; with no live package it is an error, so a
 * typo never passes silently.
 * @throws {Error} a ModeCatalogError, or an Error naming the tool package and the tool whose `Modes` is malformed.
 */
export async function composeHostCatalog(
  config: AptixConfig,
  toolPackages: readonly LoadedToolPackage[],
  registry: AgentToolRegistry,
  livePackages: readonly string[] = [],
): Promise<HostCatalog> {
  const base = await loadModeCatalog(config.modes ?? defaultCatalogPath);
  const configSource = config.file ? `the "modes" of ${config.file}` : 'the configuration';
  const extensions: ModeCatalogExtension[] = [];
  if (config.modeChanges) extensions.push({ source: configSource, ...config.modeChanges, unknownMode: 'error' });
  for (const toolPackage of toolPackages)
    extensions.push({
      source: `tool package "${toolPackage.name}"`,
      extend: packageJoins(toolPackage),
      unknownMode: 'warning',
    });

  const { catalog, warnings } = composeModeCatalog(base, extensions);
  const awaited = livePackages.length === 0 ? new Map<string, string[]>() : unofferedNames(registry, catalog);
  if (livePackages.length === 0) refuseMisspeltNames(config, configSource, registry);
  checkCatalogAgainstRegistry(
    { has: (name) => registry.has(name) || awaited.has(name), names: () => registry.names() },
    catalog,
  );
  const later = [...awaited].map(
    ([name, modes]) =>
      `Tool "${name}" is named in mode${modes.length > 1 ? 's' : ''} ${modes.join(', ')}, but no package offers it at start-up. ` +
      `The mode${modes.length > 1 ? 's offer' : ' offers'} it once ` +
      `${livePackages.map((live) => `"${live}"`).join(' or ')} (whose tools change while the host ` +
      `runs) offers it; until then ${modes.length > 1 ? 'they leave' : 'it leaves'} it out. ` +
      `If the name is a typo, fix it in ${config.file ? `the "modes" of ${config.file}` : 'the mode catalog'}.`,
  );
  const idle = toolsInNoMode(registry.names(), catalog).map((name) => {
    const owner = toolPackages.find((toolPackage) => toolPackage.tools.some((tool) => tool.ToolName === name));
    return (
      `Tool "${name}"${owner ? ` from "${owner.name}"` : ''} is offered in no mode, so no session's model is offered it (HTTP, MCP and the CLI still serve it). ` +
      `Fix: add static readonly Modes = ['general'] to its class, or "modes": { "extend": { "general": ["${name}"] } } to aptix.config.json.`
    );
  });
  return { catalog, warnings: [...warnings, ...later, ...idle], awaited: [...awaited.keys()] };
}

/**
 * Throws when the configuration's own modes name a tool no package registered, one slip away from a
 * registered name: the configuration is wrong there, not a tool package, so the message says so.
 */
function refuseMisspeltNames(config: AptixConfig, configSource: string, registry: AgentToolRegistry): void {
  const named: Array<[mode: string, tool: string]> = [
    ...Object.entries(config.modeChanges?.extend ?? {}).flatMap(([mode, tools]) =>
      tools.map((tool): [string, string] => [mode, tool]),
    ),
    ...(config.modeChanges?.add ?? []).flatMap((mode) => mode.tools.map((tool): [string, string] => [mode.key, tool])),
  ];
  const typos = named.flatMap(([mode, tool]) => {
    const guess = registry.has(tool) ? undefined : closest(tool, registry.names());
    return guess === undefined
      ? []
      : [`mode "${mode}" names "${tool}", which no tool package offers: did you mean "${guess}"?`];
  });
  if (typos.length > 0)
    throw new Error(
      `in ${configSource}, ${typos.join(' And ')} Fix: correct the name${typos.length > 1 ? 's' : ''} there.`,
    );
}

/** Tool name → the modes that name it, for the names no package registered (the always-offered tools stay required). */
function unofferedNames(registry: AgentToolRegistry, catalog: ComposedModeCatalog['catalog']): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const mode of catalog.modes) {
    for (const name of mode.tools) {
      if (registry.has(name) || (ALWAYS_OFFERED_TOOLS as readonly string[]).includes(name)) continue;
      const modes = names.get(name) ?? [];
      modes.push(mode.key);
      names.set(name, modes);
    }
  }
  return names;
}

/** The modes each tool of a package asks to join, as `{ modeKey: [toolName, …] }`. */
function packageJoins(toolPackage: LoadedToolPackage): Record<string, string[]> {
  const joins: Record<string, string[]> = {};
  for (const tool of toolPackage.tools) {
    const modes: unknown = (tool as { Modes?: unknown }).Modes;
    if (modes === undefined) continue;
    if (!Array.isArray(modes) || modes.some((key) => typeof key !== 'string' || !MODE_KEY.test(key))) {
      throw new Error(
        `tool package "${toolPackage.name}": Tool "${tool.ToolName}" declares Modes = ${(JSON.stringify(modes) as string | undefined) ?? String(modes)}, which is not a list of mode keys. ` +
          `Fix: declare static readonly Modes = ['general'], with snake_case mode keys.`,
      );
    }
    for (const key of modes as string[]) (joins[key] ??= []).push(tool.ToolName);
  }
  return joins;
}
