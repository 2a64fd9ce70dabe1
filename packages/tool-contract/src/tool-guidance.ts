/** The element around one tool's usage guide in a system prompt (AGN-005 §7.2.3): `<tool_guidance name="…">`. */
export const TOOL_GUIDANCE_TAG = 'tool_guidance';

/** One tool's usage guide: its name and its `ToolUsageMetadata`. */
export interface ToolGuide {
  readonly name: string;
  readonly text: string;
}

/**
 * The "# Tool guidance" section of a system prompt: each offered tool's usage guide in a
 * `<tool_guidance name="…">` element, in the order given. The Reasoner puts it in its instructions;
 * the framework adapters hand it to applications that write their own system prompt.
 *
 * The caller checks each text first: none may be empty or contain the closing tag.
 * @example
 * const section = toolGuidanceSection(names.map((name) => ({ name, text: registry.get(name)!.usageMetadata })), { inMode: true });
 */
export function toolGuidanceSection(guides: readonly ToolGuide[], options: { readonly inMode?: boolean } = {}): string {
  return [
    '# Tool guidance',
    `Each tool offered${options.inMode ? ' in this mode' : ''} has a usage guide below, in a ` +
      `${TOOL_GUIDANCE_TAG} element whose name attribute is the tool's name. Follow it when ` +
      `deciding whether and how to call the tool.`,
    ...guides.map(({ name, text }) => `<${TOOL_GUIDANCE_TAG} name="${name}">\n${text.trim()}\n</${TOOL_GUIDANCE_TAG}>`),
  ].join('\n\n');
}
