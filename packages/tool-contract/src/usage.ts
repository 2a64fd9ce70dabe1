/**
 * A template tag for `ToolUsageMetadata`: strips the common indentation and the blank first and
 * last lines, so guidance reads naturally in the source and lands clean in the system prompt.
 * @example
 * static readonly ToolUsageMetadata = usage`
 *   agent_hello_world — Usage Guide
 *
 *   Primary purpose:
 *   - Greet the user by name.
 * `;
 */
export function usage(strings: TemplateStringsArray, ...values: unknown[]): string {
  const raw = strings.reduce(
    (text, part, index) => text + part + (index < values.length ? String(values[index]) : ''),
    '',
  );
  const lines = raw.replace(/\r\n/g, '\n').split('\n');
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  const indent = Math.min(
    ...lines.filter((line) => line.trim() !== '').map((line) => line.length - line.trimStart().length),
  );
  return lines.map((line) => line.slice(Number.isFinite(indent) ? indent : 0).trimEnd()).join('\n');
}

/**
 * The six sections of a usage guide, in order, with the headings the Reasoner and the contract kit look for
 * (each written as `Heading:` on its own line, as docs/tool-packages.md shows).
 */
export const USAGE_SECTIONS = [
  { key: 'purpose', heading: 'Primary purpose', pattern: /^\s*primary purpose\s*:/im },
  { key: 'rules', heading: 'Rules', pattern: /^\s*rules\s*:/im },
  { key: 'arguments', heading: 'Arguments', pattern: /^\s*arguments\s*:/im },
  { key: 'errors', heading: 'Error codes', pattern: /^\s*error codes\s*:/im },
  { key: 'good', heading: 'Good usage', pattern: /^\s*good usage\s*:/im },
  { key: 'bad', heading: 'Bad usage', pattern: /^\s*bad usage\s*:/im },
] as const;

/** The usage-guide sections that `text` lacks (an empty list when it follows the format). */
export function missingUsageSections(text: string): string[] {
  return USAGE_SECTIONS.filter((section) => !section.pattern.test(text)).map((section) => section.heading);
}
