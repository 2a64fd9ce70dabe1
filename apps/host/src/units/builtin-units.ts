import {
  definePrompt,
  defineResource,
  TOOL_NAME_MAX_LENGTH,
  type AgentToolRegistry,
  type DefinedPrompt,
  type DefinedResource,
} from '@aptix/tool-contract';
import type { AgentModeSummary, ModeCatalog } from '@aptix/tool-mode-catalog';

/** The URI template of a tool's usage guide. */
export const TOOL_GUIDE_TEMPLATE = 'aptix://tools/{name}/guide';
/** The URI of the mode catalog. */
export const MODES_URI = 'aptix://modes';
/** The name of the resource template serving every tool's guide. */
export const TOOL_GUIDE_RESOURCE = 'aptix_tool_guide';
/** The name of the mode catalog resource. */
export const MODES_RESOURCE = 'aptix_modes';

/** The prompt carrying a mode's guidance, or undefined when `mode_<key>` would pass the name rule's 64 characters. */
export function modePromptName(key: string): string | undefined {
  const name = `mode_${key}`;
  return name.length <= TOOL_NAME_MAX_LENGTH ? name : undefined;
}

/** A mode's guidance as the agent loop gives it to the model: the mode, what it is for, and the other modes. */
export function modeGuidance(mode: AgentModeSummary, modes: readonly AgentModeSummary[]): string {
  const others = modes.filter((candidate) => candidate.key !== mode.key);
  return [
    `# Current mode: ${mode.displayName} (${mode.key})`,
    mode.systemPromptSummary.trim() || mode.description,
    '',
    '# Other modes',
    ...(others.length === 0
      ? ['None: this is the only mode.']
      : others.map((other) => `- ${other.key} (${other.displayName}): ${other.description}`)),
    '',
    `Tools of this mode: ${mode.tools.join(', ') || 'none'}.`,
  ].join('\n');
}

/** Every mode's guidance as a prompt (`mode_<key>`), seen in every mode the principal may use. */
export function modePrompts(catalog: ModeCatalog): DefinedPrompt[] {
  return catalog.modes.flatMap((mode) => {
    const name = modePromptName(mode.key);
    if (name === undefined) return [];
    return [
      definePrompt({
        name,
        title: `Mode: ${mode.displayName}`,
        description: `The guidance of mode "${mode.key}" (${mode.description.trim()}), as the agent loop gives it to the model.`,
        render: () => modeGuidance(mode, catalog.modes),
      }),
    ];
  });
}

/**
 * The built-in resources: every tool's usage guide at `aptix://tools/<name>/guide` (a tool the scope
 * offers and the principal may call; see host-units.ts), and the mode catalog at `aptix://modes`.
 */
export function builtinResources(registry: AgentToolRegistry, catalog: ModeCatalog): DefinedResource[] {
  return [
    defineResource({
      name: TOOL_GUIDE_RESOURCE,
      title: 'Tool usage guide',
      description:
        'The usage guide of a tool this mode offers: when to call it, its arguments, its error codes, good and bad calls.',
      uriTemplate: TOOL_GUIDE_TEMPLATE,
      mimeType: 'text/markdown',
      read: ({ variables }) => {
        const tool = registry.get(variables.name!);
        if (tool === undefined) throw new Error(`No tool named "${variables.name}" is registered.`);
        return tool.usageMetadata;
      },
    }),
    defineResource({
      name: MODES_RESOURCE,
      title: 'Mode catalog',
      description: 'Every mode of this host: its key, name, what it is for, its guidance and its tools.',
      uri: MODES_URI,
      mimeType: 'application/json',
      read: () =>
        JSON.stringify({
          modes: catalog.modes.map(({ key, displayName, description, systemPromptSummary, isDefault, tools }) => ({
            key,
            displayName,
            description,
            systemPromptSummary,
            isDefault,
            tools,
          })),
        }),
    }),
  ];
}
