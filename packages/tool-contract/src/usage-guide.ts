import { USAGE_SECTIONS } from './usage.js';

/**
 * The lines of one section: a string is one item, an array one item per entry, and an array cannot
 * be empty. Each item is rendered as a `- ` line; the lines after a line break in an item are indented
 * under it. A guide declared apart from its use keeps its lists as lists with
 * `satisfies UsageGuideSections` (or `as const`).
 */
export type UsageItems = string | readonly [string, ...string[]];

/** Items by what they are about (`value`, `BELOW_ABSOLUTE_ZERO`): each rendered as `- key: text`, in order. */
export type UsageEntries = Readonly<Record<string, string>>;

/**
 * A tool's usage guide (AGN-005 §7.2) as fields: the six sections of docs/rules.md are required, so
 * leaving one out is a type error, and {@link usageGuide} writes them under their headings, in order.
 */
export interface UsageGuideSections {
  /** `Primary purpose:` what the tool is for, in a sentence. */
  readonly purpose: UsageItems;
  /** `Rules:` when to call it and when not to. */
  readonly rules: UsageItems;
  /** `Arguments:` each argument and what to send, e.g. `{ value: 'the temperature, a number.' }`. */
  readonly arguments: UsageItems | UsageEntries;
  /** `Result:` (optional, after the arguments) what a successful result holds. */
  readonly result?: UsageItems | UsageEntries;
  /** `Error codes:` each code the tool can return, what it means and what to do, e.g. `{ NOT_FOUND: 'no such city; ask the user.' }`. */
  readonly errors: UsageItems | UsageEntries;
  /** `Good usage:` calls as they should be made. */
  readonly good: UsageItems;
  /** `Bad usage:` calls that are wrong, and why. */
  readonly bad: UsageItems;
}

/** The optional `Result:` section goes after `Arguments:`, as the first-party guides have it. */
const ORDER = [
  ...USAGE_SECTIONS.slice(0, 3),
  { key: 'result', heading: 'Result' },
  ...USAGE_SECTIONS.slice(3),
] as const;

/** The items of a section as lines of text (an entry as `key: text`). */
export function usageItems(items: UsageItems | UsageEntries | undefined): string[] {
  if (items === undefined) return [];
  if (typeof items === 'string') return [items];
  if (Array.isArray(items)) return items.map(String);
  return Object.entries(items).map(([key, text]) => `${key}: ${String(text)}`);
}

/**
 * Renders a usage guide from its sections: the `<name> — Usage Guide` title, then each section as
 * `Heading:` and its items as `- ` lines, a blank line between them. The text is what the same guide
 * written by hand with the {@link usage} tag gives, so a class may use it for its `ToolUsageMetadata`
 * too. A section left out (from JavaScript) is left out of the text, and the contract kit warns.
 *
 * @example
 * static readonly ToolUsageMetadata = usageGuide('agent_hello_world', {
 *   purpose: 'Greet the user by name.',
 *   rules: ['Call it once per greeting request.', 'Never call it without a name.'],
 *   arguments: { name: "the user's name as they gave it." },
 *   errors: { INVALID_ARGUMENTS: 'name is missing or empty; ask the user for it.' },
 *   good: '"Say hello to Ada" → { "name": "Ada" }',
 *   bad: '{ "name": "" }: the name must not be empty.',
 * });
 */
export function usageGuide(name: string, sections: UsageGuideSections): string {
  const lines = [`${name} — Usage Guide`];
  for (const { key, heading } of ORDER) {
    if (sections[key] === undefined) continue;
    lines.push('', `${heading}:`);
    for (const item of usageItems(sections[key])) lines.push(bullet(item));
  }
  return lines.join('\n');
}

/** `- ` and the item, its later lines indented under the first, trailing spaces dropped (as `usage` does). */
function bullet(item: string): string {
  return item
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line, index) => (index === 0 ? `- ${line.trim()}` : `  ${line.trim()}`).trimEnd())
    .join('\n');
}
