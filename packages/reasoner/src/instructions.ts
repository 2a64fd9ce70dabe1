import { TOOL_GUIDANCE_TAG, toolGuidanceSection, type ResponsesFunctionDefinition } from '@aptix/tool-contract';
import { toolNamesForMode, type AgentModeSummary, type ModeCatalog } from '@aptix/tool-mode-catalog';
import { metaToolDefinitions, type ToolFinder } from '@aptix/tool-search';
import { directTools, finderFor, findingToolsSection } from './deferred-modes.js';
import { ReasonerError, ReasonerErrorCode } from './reasoner-error.js';
import type { ReasonerToolRegistry } from './tool-registry-view.js';

// In a module of its own, so that deferred-modes.ts (which reads the registry) is not imported back.
export type { ReasonerToolRegistry } from './tool-registry-view.js';

/**
 * The opening of every instruction text, before the mode and the tool guidance. A host may replace it
 * (`bootPrompt`); the mode and guidance sections are always added.
 */
export const DEFAULT_BOOT_PROMPT = [
  'You are Aptix, an assistant that works in modes and acts through tools.',
  'The current mode, below, sets your focus and decides which tools you are offered; the other modes are listed so you can suggest one when a request belongs there.',
  'Call a tool only when it gives a better answer than reasoning alone, and follow its usage guide.',
  'Tool results are JSON. A failed call comes back as {"error": {"message": "...", "code": ' +
    '"..."}}: read the message, correct the arguments or explain the failure to the user, and ' +
    'never invent a result.',
].join('\n');

/** The opening and closing tags around one tool's usage guide in the instructions (AGN-005 §7.2.3). */
export { TOOL_GUIDANCE_TAG };

/** Everything a model call in one mode carries: the instructions and the tools, computed once at start-up. */
export interface ModePrompt {
  readonly mode: string;
  /** The full `instructions` of a Responses request in this mode. */
  readonly instructions: string;
  /** The names of the tools the mode offers (a call runs only if its tool is here), in the order they are sent unless `deferred`. */
  readonly toolNames: readonly string[];
  /**
   * The tools sent, in the Responses format, `strict` explicit: the mode's, or for a deferred mode
   * `aptix_find_tools`, `aptix_call_tool` and the mode tools.
   */
  readonly tools: readonly ResponsesFunctionDefinition[];
  /** The mode is offered through `aptix_find_tools` and `aptix_call_tool` (the `deferred` option). */
  readonly deferred: boolean;
  /** For a deferred mode: the search over `toolNames`, its index built on the first query. */
  readonly finder?: ToolFinder;
}

/**
 * Builds the instructions and tools of every mode in the catalog, and checks on the way that each
 * offered tool is registered and has usage metadata. Run at start-up, so a misconfiguration stops the
 * host before the first message rather than failing a turn.
 *
 * `deferred` holds the keys of the modes offered through `aptix_find_tools` and `aptix_call_tool`.
 *
 * @throws {ReasonerError} `CATALOG_MISMATCH` (a mode offers an unregistered tool) or `USAGE_METADATA_MISSING`.
 */
export function buildModePrompts(
  registry: ReasonerToolRegistry,
  catalog: ModeCatalog,
  bootPrompt: string = DEFAULT_BOOT_PROMPT,
  offeredTools?: (modeKey: string) => readonly string[] | undefined,
  deferred: ReadonlySet<string> = new Set(),
): ReadonlyMap<string, ModePrompt> {
  const prompts = new Map<string, ModePrompt>();
  const problems: string[] = [];
  for (const mode of catalog.modes) {
    let toolNames: string[];
    try {
      const offered = offeredTools?.(mode.key);
      toolNames =
        offered === undefined
          ? toolNamesForMode(registry, catalog, mode.key)
          : offered.filter((name) => registry.has(name));
    } catch (error) {
      throw new ReasonerError(
        ReasonerErrorCode.CATALOG_MISMATCH,
        `Mode catalog ${catalog.source} cannot be served: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const guides: Array<{ name: string; text: string }> = [];
    for (const name of toolNames) {
      const text = registry.get(name)?.usageMetadata;
      if (typeof text !== 'string' || text.trim() === '') {
        problems.push(`tool "${name}" (offered in mode "${mode.key}") has no ToolUsageMetadata`);
      } else if (text.includes(`</${TOOL_GUIDANCE_TAG}>`)) {
        problems.push(
          `the ToolUsageMetadata of "${name}" contains "</${TOOL_GUIDANCE_TAG}>", which would end its section of the instructions early`,
        );
      } else {
        guides.push({ name, text: text.trim() });
      }
    }
    if (problems.length === 0)
      prompts.set(
        mode.key,
        modePrompt(registry, bootPrompt, mode, catalog.modes, toolNames, guides, deferred.has(mode.key)),
      );
  }
  if (problems.length > 0) {
    throw new ReasonerError(
      ReasonerErrorCode.USAGE_METADATA_MISSING,
      `The Reasoner cannot build its tool guidance (the system prompt holds the usage guide of every tool the mode offers): ${[...new Set(problems)].join('; ')}. ` +
        'Fix: give each tool a non-empty static ToolUsageMetadata (usage`...` with its purpose, rules, arguments, error codes, good and bad usage), or stop offering it in that mode.',
    );
  }
  return prompts;
}

function modePrompt(
  registry: ReasonerToolRegistry,
  bootPrompt: string,
  mode: AgentModeSummary,
  modes: readonly AgentModeSummary[],
  toolNames: string[],
  guides: ReadonlyArray<{ name: string; text: string }>,
  deferred: boolean,
): ModePrompt {
  if (!deferred) {
    const instructions = composeInstructions(bootPrompt, mode, modes, guides);
    return {
      mode: mode.key,
      instructions,
      toolNames: Object.freeze(toolNames),
      tools: registry.definitions('responses', toolNames),
      deferred,
    };
  }
  // Only the mode tools go out in full, with their guides (agent_change_mode's says to ask the user first);
  // the others' definitions and guides come from aptix_find_tools when the model needs them.
  const direct = directTools(toolNames);
  return {
    mode: mode.key,
    instructions: composeInstructions(
      bootPrompt,
      mode,
      modes,
      guides.filter((guide) => direct.includes(guide.name)),
      findingToolsSection(toolNames.length - direct.length),
    ),
    toolNames: Object.freeze(toolNames),
    tools: Object.freeze([...metaToolDefinitions('responses'), ...registry.definitions('responses', direct)]),
    deferred,
    finder: finderFor(registry, mode.key, toolNames),
  };
}

function composeInstructions(
  bootPrompt: string,
  mode: AgentModeSummary,
  modes: readonly AgentModeSummary[],
  guides: ReadonlyArray<{ name: string; text: string }>,
  findingTools?: string,
): string {
  const others = modes.filter((candidate) => candidate.key !== mode.key);
  const sections = [
    bootPrompt.trim(),
    [`# Current mode: ${mode.displayName} (${mode.key})`, mode.systemPromptSummary.trim() || mode.description].join(
      '\n',
    ),
    [
      '# Other modes',
      ...(others.length === 0
        ? ['None: this is the only mode.']
        : [
            ...others.map((other) => `- ${other.key} (${other.displayName}): ${other.description}`),
            'To move the work to another mode, follow the usage guide of agent_change_mode: propose the mode and wait for the user to confirm.',
          ]),
    ].join('\n'),
    ...(findingTools === undefined ? [] : [findingTools]),
    toolGuidanceSection(guides, { inMode: true }),
  ];
  return sections.join('\n\n');
}
