import { createHash } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN } from '@aptix/tool-contract';
import { ModeCatalogError } from './mode-catalog-error.js';
import { ModeCatalog, unknownModeError } from './mode-catalog.js';
import { AgentModeSummary, MODE_ID_PATTERN, MODE_KEY_MAX_LENGTH, MODE_KEY_PATTERN } from './mode-summary.js';
import { ALWAYS_OFFERED_TOOLS } from './mode-tools.js';

const ToolNames = Type.Array(Type.String({ pattern: TOOL_NAME_PATTERN.source, maxLength: TOOL_NAME_MAX_LENGTH }), {
  description: 'Tool names.',
});

/** A mode to add to a catalog: a catalog entry whose `id` may be left out (it is then derived from the key). */
export const ModeToAdd = Type.Object(
  {
    ...AgentModeSummary.properties,
    id: Type.Optional(
      Type.String({
        pattern: MODE_ID_PATTERN,
        description: 'Optional: 32 lowercase hexadecimal characters. Derived from the key when left out.',
      }),
    ),
    systemPromptSummary: Type.Optional(
      Type.String({ description: 'One paragraph on how prompts should treat this mode. Default: empty.' }),
    ),
    isDefault: Type.Optional(
      Type.Boolean({
        description:
          'True to make this the mode new sessions start in (the shipped default must then not be one). Default: false.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ModeToAdd = Static<typeof ModeToAdd>;

/**
 * The object form of a host's `modes` setting: a catalog (the shipped one when left out), tools added to
 * its modes, and new modes; none of it needs a copy of the catalog.
 */
export const ModeCatalogChanges = Type.Object(
  {
    catalog: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Path of a catalog file to start from. Default: the catalog shipped with @aptix/tool-mode-catalog.',
      }),
    ),
    extend: Type.Optional(
      Type.Record(Type.String({ pattern: MODE_KEY_PATTERN, maxLength: MODE_KEY_MAX_LENGTH }), ToolNames, {
        description: 'Tools to add to modes of the catalog, by mode key: { "general": ["acme_convert_temperature"] }.',
      }),
    ),
    add: Type.Optional(Type.Array(ModeToAdd, { description: 'Modes to add to the catalog.' })),
  },
  { additionalProperties: false },
);
export type ModeCatalogChanges = Static<typeof ModeCatalogChanges>;

/** One set of changes to a catalog, and who asked for it. */
export interface ModeCatalogExtension {
  /** Who asked, for messages: `aptix.config.json`, `tool package "@acme/weather-tools"`. */
  readonly source: string;
  /** Tools to add to modes, by mode key. */
  readonly extend?: Readonly<Record<string, readonly string[]>>;
  /** Whole modes to add. */
  readonly add?: readonly ModeToAdd[];
  /**
   * What a mode key the catalog lacks is: an `error` (a host's own configuration), or a `warning` (a tool
   * package, which cannot know every host's modes: its tool then joins no mode there). Default `error`.
   */
  readonly unknownMode?: 'error' | 'warning';
}

/** The composed catalog, and what was skipped on the way (for `aptix check` and the start-up log). */
export interface ComposedModeCatalog {
  readonly catalog: ModeCatalog;
  readonly warnings: readonly string[];
}

/**
 * Builds a catalog from `base` and extensions without copying it: every `add` first (so a tool package
 * can join a mode the host's configuration adds), then every `extend`, in the order given. A tool
 * already in a mode is not added twice. The result is checked exactly as a catalog file is (keys, ids,
 * one default), and keeps the shipped modes' order, so TUL-010 lists them as before.
 *
 * @throws {ModeCatalogError} `UNKNOWN_MODE` for an `extend` of a mode no catalog has (when `unknownMode`
 *   is `error`), or any catalog check's code.
 * @example
 * const { catalog } = composeModeCatalog(await loadModeCatalog(), [
 *   { source: 'aptix.config.json', extend: { general: ['acme_convert_temperature'] } },
 * ]);
 */
export function composeModeCatalog(
  base: ModeCatalog,
  extensions: readonly ModeCatalogExtension[],
): ComposedModeCatalog {
  const changing = extensions.filter(
    (extension) => (extension.add?.length ?? 0) > 0 || Object.keys(extension.extend ?? {}).length > 0,
  );
  if (changing.length === 0) return { catalog: base, warnings: [] };
  const source = `${base.source} with additions from ${[...new Set(changing.map((extension) => extension.source))].join(', ')}`;
  const modes: AgentModeSummary[] = base.modes.map((mode) => ({ ...mode, tools: [...mode.tools] }));
  const warnings: string[] = [];

  for (const extension of changing) {
    for (const mode of extension.add ?? []) {
      modes.push({
        ...mode,
        id: mode.id ?? idFromKey(mode.key),
        systemPromptSummary: mode.systemPromptSummary ?? '',
        isDefault: mode.isDefault ?? false,
        tools: [...mode.tools],
      });
    }
  }
  for (const extension of changing) {
    for (const [key, tools] of Object.entries(extension.extend ?? {})) {
      const mode = modes.find((candidate) => candidate.key === key);
      if (mode === undefined) {
        const keys = modes.map((candidate) => candidate.key);
        if (extension.unknownMode === 'warning') {
          warnings.push(
            `${extension.source} adds ${tools.map((tool) => JSON.stringify(tool)).join(', ')} to mode ` +
              `${JSON.stringify(key)}, which this host's catalog does not have (modes: ` +
              `${keys.join(', ')}), so it joins no mode there. Fix: add the mode under "modes": { "add": ` +
              `[...] } in aptix.config.json, or add the tool to a mode with "modes": { "extend": { ` +
              `"<mode>": ["<tool>"] } }.`,
          );
          continue;
        }
        const error = unknownModeError(key, keys, source);
        throw new ModeCatalogError(
          error.code,
          `${extension.source} adds tools to mode ${JSON.stringify(key)}, which the catalog does not have. Valid modes: ${keys.join(', ')}. Fix: use one of them, or add the mode under "add".`,
          { source, issues: error.issues },
        );
      }
      for (const tool of tools) if (!mode.tools.includes(tool)) mode.tools.push(tool);
    }
  }
  return { catalog: ModeCatalog.fromModes(modes, source), warnings };
}

/**
 * The tools a registry holds that no mode offers (the always-offered ones aside): served over HTTP, MCP
 * and the CLI, but never offered to a model in a session.
 * @example for (const name of toolsInNoMode(registry.names(), catalog)) console.warn(`${name} is offered in no mode`);
 */
export function toolsInNoMode(toolNames: readonly string[], catalog: ModeCatalog): string[] {
  const offered = new Set<string>([...ALWAYS_OFFERED_TOOLS, ...catalog.modes.flatMap((mode) => mode.tools)]);
  return toolNames.filter((name) => !offered.has(name));
}

/** A stable id for a mode added without one: the first 32 hexadecimal characters of the key's SHA-256. */
function idFromKey(key: string): string {
  return createHash('sha256').update(`aptix-mode:${key}`).digest('hex').slice(0, 32);
}
