import type { ParametersSchema, ToolAnnotations } from '@aptix/tool-contract';
import { BRIDGE_ERROR_MEANINGS } from './codes.js';

/** The first line after the title of every generated guide: how a reader (or a test) tells it was generated. */
export const GENERATED_MARKER = 'Generated: by @aptix/tool-mcp-bridge';
/** Longest remote description carried into a guide or a schema, in characters. */
export const MAX_DESCRIPTION_LENGTH = 2_000;

export interface UsageSource {
  readonly name: string;
  readonly remoteName: string;
  readonly server: string;
  readonly description: string;
  readonly parameters: ParametersSchema;
  readonly annotations: ToolAnnotations | undefined;
}

/** A remote description or title, cut to a bounded length on a word boundary. */
export function boundedText(text: string, max = MAX_DESCRIPTION_LENGTH): string {
  const clean = text.replace(/\r\n/g, '\n').trim();
  if (clean.length <= max) return clean;
  const cut = clean.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

/**
 * Builds the AGN-005 §7.2.2 guide of a bridged tool from what the server says about it: its
 * description, its arguments and its annotations. It says it was generated, and why "Good usage" and
 * "Bad usage" are missing: the server does not describe them, and inventing them would mislead the model.
 * The contract kit therefore warns USAGE_SECTION_MISSING for those two sections; that is expected.
 */
export function generatedUsage(source: UsageSource): string {
  const { annotations } = source;
  const hint = (value: boolean | undefined, yes: string, no: string | undefined) =>
    value === true ? yes : value === false ? no : undefined;
  const rules = [
    `- The tool runs on the MCP server "${source.server}" (its own name there: "${source.remoteName}"); the host forwards each call and its cancellation.`,
    hint(
      annotations?.readOnlyHint,
      '- The server marks it read-only: it changes nothing.',
      '- The server does not mark it read-only: it may change things; call it only when the user wants that.',
    ),
    hint(annotations?.destructiveHint, '- The server marks it destructive: confirm with the user first.', undefined),
    hint(
      annotations?.idempotentHint,
      '- The server marks it idempotent: calling it again with the same arguments has no further effect.',
      '- The server does not mark it idempotent: do not repeat a call that may have succeeded.',
    ),
    hint(
      annotations?.openWorldHint,
      '- The server marks it open-world: it reaches systems outside the server.',
      undefined,
    ),
  ].filter((line): line is string => line !== undefined);
  const required = new Set(source.parameters.required);
  const argumentsText = Object.entries(
    source.parameters.properties as Record<string, { type?: unknown; description?: unknown }>,
  ).map(([name, schema]) => {
    const type = Array.isArray(schema.type)
      ? schema.type.join(' | ')
      : typeof schema.type === 'string'
        ? schema.type
        : 'see the schema';
    return `- ${name} (${type}, ${required.has(name) ? 'required' : 'optional'}): ${boundedText(String(schema.description ?? ''), 300)}`;
  });
  return [
    `${source.name} — Usage Guide`,
    '',
    `${GENERATED_MARKER} from the description and input schema the MCP server ` +
      `"${source.server}" gives for its tool "${source.remoteName}". The server describes no good ` +
      `and bad usage, so those sections are left out rather than invented; contract warnings ` +
      `about them are expected.`,
    '',
    'Primary purpose:',
    `- ${boundedText(source.description).replace(/\n+/g, ' ')}`,
    '',
    'Rules:',
    ...rules,
    '',
    'Arguments:',
    ...(argumentsText.length > 0 ? argumentsText : ['- none: send {}.']),
    '',
    'Error codes:',
    ...Object.entries(BRIDGE_ERROR_MEANINGS).map(([code, meaning]) => `- ${code}: ${meaning}`),
    '- INVALID_ARGUMENTS: the arguments do not match the schema above.',
    '- TOOL_EXCEPTION: the call could not be forwarded to the server; whether it reached the server is unknown.',
    ...(source.annotations?.readOnlyHint === true
      ? [
          '- TIMEOUT: the server did not answer in time; the host cancelled the call on the server. The tool changes nothing.',
          '- A successful result with "wasCancelled": true: the caller cancelled the call; the tool changes nothing.',
        ]
      : [
          '- OUTCOME_UNKNOWN: the call was cancelled, or the server did not answer in time, and the server may have finished first: whether it took effect is unknown. Check before calling it again.',
          '- A successful result with "wasCancelled": true: the call was cancelled before it was ' +
            'sent; nothing happened. (TIMEOUT is not answered for this tool, which may change things: ' +
            'OUTCOME_UNKNOWN instead.)',
        ]),
  ].join('\n');
}
