import { TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN } from '@aptix/tool-contract';
import { Type, type Static } from 'typebox';

/** A GUID without hyphens, lower case: `922a80f88dfd42b8b2b677badd23218c`. */
export const MODE_ID_PATTERN = '^[0-9a-f]{32}$';
/** snake_case: lowercase letters and digits in words joined by single underscores, starting with a letter. */
export const MODE_KEY_PATTERN = '^[a-z][a-z0-9]*(_[a-z0-9]+)*$';
export const MODE_KEY_MAX_LENGTH = 64;

/**
 * One agent mode as the catalog describes it (TUL-010 §2). The catalog file holds these as they are,
 * so the schema is closed: a misspelt field is an error at load, not a silently ignored key.
 */
export const AgentModeSummary = Type.Object(
  {
    id: Type.String({
      pattern: MODE_ID_PATTERN,
      description: 'The mode identifier: a GUID without hyphens, 32 lowercase hexadecimal characters.',
    }),
    key: Type.String({
      pattern: MODE_KEY_PATTERN,
      maxLength: MODE_KEY_MAX_LENGTH,
      description: 'The stable snake_case key sessions and tools use for this mode.',
    }),
    displayName: Type.String({ minLength: 1, description: 'Human-readable name for a UI.' }),
    description: Type.String({ minLength: 1, description: 'A short explanation of what the mode is for.' }),
    systemPromptSummary: Type.String({
      description: 'One paragraph on how prompts should treat this mode (may be empty).',
    }),
    isDefault: Type.Boolean({ description: 'True for the one mode new sessions start in.' }),
    // TUL-010 §2: either may be null or empty; agent_list_modes presents null as an empty list.
    humanRoleHints: Type.Optional(
      Type.Union([Type.Array(Type.String({ minLength: 1 })), Type.Null()], {
        description: 'The human roles this mode mainly serves (null or empty: none).',
      }),
    ),
    exampleUtterances: Type.Optional(
      Type.Union([Type.Array(Type.String({ minLength: 1 })), Type.Null()], {
        description: 'Sample user requests that clearly belong to this mode (null or empty: none).',
      }),
    ),
    tools: Type.Array(Type.String({ pattern: TOOL_NAME_PATTERN.source, maxLength: TOOL_NAME_MAX_LENGTH }), {
      uniqueItems: true,
      description:
        'The tools offered to the model in this mode, besides agent_list_modes and agent_change_mode, which every mode offers.',
    }),
  },
  { additionalProperties: false },
);
export type AgentModeSummary = Static<typeof AgentModeSummary>;

/** The catalog file: `{ "modes": [ ... ] }`. At least one mode, since exactly one must be the default. */
export const ModeCatalogFile = Type.Object(
  {
    modes: Type.Array(AgentModeSummary, {
      minItems: 1,
      description: 'The modes, in the order they are listed to the model.',
    }),
  },
  { additionalProperties: false },
);
export type ModeCatalogFile = Static<typeof ModeCatalogFile>;

/**
 * The read side of the mode catalog that `agent_list_modes` depends on (TUL-010 §2's
 * `IAgentModeCatalogService`). Caching, if any, is the implementation's business (TUL-010 §4.4).
 */
export interface AgentModeCatalogService {
  /** Every configured mode, in catalog order. */
  getAllModes(signal?: AbortSignal): Promise<readonly AgentModeSummary[]>;
}
