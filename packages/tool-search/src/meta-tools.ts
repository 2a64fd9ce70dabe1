import { Type, type Static } from 'typebox';
import {
  decodeArguments,
  functionToolSchema,
  toStrictMode,
  type DefinitionByFormat,
  type DefinitionFormat,
  type JsonSchema,
} from '@aptix/tool-contract';

/** The tool that finds the tools of a session's mode that fit a task. */
export const FIND_TOOLS = 'aptix_find_tools';
/** The tool that calls a tool of a session's mode by name. */
export const CALL_TOOL = 'aptix_call_tool';

/** How many tools one find answers when the model does not say; what it may ask for at most. */
export const DEFAULT_FIND_LIMIT = 8;
export const MAX_FIND_LIMIT = 25;

const SessionHandle = Type.String({
  minLength: 1,
  maxLength: 200,
  description:
    'The agent session to work in: the sessionId that agent_change_mode returned. Leave it out (null) to work in the default mode.',
});

export const FindToolsArgs = Type.Object(
  {
    query: Type.Optional(
      Type.String({
        maxLength: 1000,
        description:
          'What you want to do, in your own words (for example "refund a payment" or "list open pull requests"). Leave it out (null) to list the mode\'s tools in order.',
      }),
    ),
    sessionId: Type.Optional(SessionHandle),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_FIND_LIMIT,
        description: `How many tools to return, best first (default ${DEFAULT_FIND_LIMIT}).`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type FindToolsArguments = Static<typeof FindToolsArgs>;

export const CallToolArgs = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The name of the tool to call, as aptix_find_tools gave it.',
    }),
    arguments: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description: "The tool's arguments, as an object that matches the parameters aptix_find_tools gave for it.",
        },
      ),
    ),
    sessionId: Type.Optional(SessionHandle),
  },
  { additionalProperties: false },
);
export type CallToolArguments = Static<typeof CallToolArgs>;

const FIND_DESCRIPTION =
  "Finds the tools of the current mode that fit a task, with each tool's description, parameters and usage guide. " +
  'Use it when the tool you need is not in your tool list, for example after agent_change_mode changed the mode; then run the tool with aptix_call_tool. ' +
  "Pass the sessionId that agent_change_mode returned to search that session's mode.";

const CALL_DESCRIPTION =
  'Calls a tool of the current mode by name, with its arguments, under the same checks as a ' +
  "direct call: the arguments are validated, the session's mode must offer the tool, and a " +
  'call that needs approval waits for it. ' +
  'Use it for tools that aptix_find_tools found. Pass the sessionId that agent_change_mode returned so the call runs in that session and its mode. ' +
  'To change the mode of that session again, call agent_change_mode through this tool with the same sessionId.';

interface MetaTool {
  readonly name: string;
  readonly description: string;
  readonly schema: { readonly type: 'object'; readonly properties: Record<string, unknown> };
  /** OpenAI strict mode: the call tool's arguments are an open object, which strict mode cannot express. */
  readonly strict: boolean;
  readonly readOnly: boolean;
}

const META_TOOLS: readonly MetaTool[] = [
  { name: FIND_TOOLS, description: FIND_DESCRIPTION, schema: FindToolsArgs, strict: true, readOnly: true },
  { name: CALL_TOOL, description: CALL_DESCRIPTION, schema: CallToolArgs, strict: false, readOnly: false },
];

function definitionOf<F extends DefinitionFormat>(tool: MetaTool, format: F): DefinitionByFormat[F] {
  const { parameters } = functionToolSchema(tool.name, tool.description, tool.schema);
  const modelParameters: JsonSchema = tool.strict ? toStrictMode(parameters).parameters : parameters;
  const definitions: { [K in DefinitionFormat]: () => DefinitionByFormat[K] } = {
    responses: () => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: modelParameters,
      strict: tool.strict,
    }),
    chat: () => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: modelParameters, strict: tool.strict },
    }),
    mcp: () => ({
      name: tool.name,
      description: tool.description,
      inputSchema: parameters,
      annotations: annotationsOf(tool),
    }),
  };
  return Object.freeze(definitions[format]()) as DefinitionByFormat[F];
}

function annotationsOf(tool: MetaTool): { readonly [hint: string]: boolean } {
  return tool.readOnly ? { readOnlyHint: true, openWorldHint: false } : { openWorldHint: true };
}

const cached = new Map<DefinitionFormat, readonly unknown[]>();

/**
 * The definitions of {@link FIND_TOOLS} and {@link CALL_TOOL} in a format (the Responses API's, Chat
 * Completions', or an MCP `tools/list` entry), the find tool first. Frozen and shared.
 */
export function metaToolDefinitions<F extends DefinitionFormat>(format: F): readonly DefinitionByFormat[F][] {
  const definitions = cached.get(format) ?? Object.freeze(META_TOOLS.map((tool) => definitionOf(tool, format)));
  cached.set(format, definitions);
  return definitions as readonly DefinitionByFormat[F][];
}

/** True for the name of one of the two meta tools. */
export function isMetaTool(name: string): boolean {
  return name === FIND_TOOLS || name === CALL_TOOL;
}

export type ReadArguments<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

/**
 * The find tool's arguments, checked (a `null` stands for a left-out argument, as OpenAI strict mode
 * sends it), or a message naming the field that is wrong.
 */
export function readFindArguments(input: unknown): ReadArguments<FindToolsArguments> {
  return decodeArguments<FindToolsArguments>(FIND_TOOLS, FindToolsArgs as unknown as JsonSchema, input);
}

/**
 * The call tool's arguments, checked, or a message naming the field that is wrong. `arguments` may
 * also come as JSON text of an object, as models sometimes send it.
 */
export function readCallArguments(input: unknown): ReadArguments<CallToolArguments> {
  return decodeArguments<CallToolArguments>(
    CALL_TOOL,
    CallToolArgs as unknown as JsonSchema,
    withParsedArguments(input),
  );
}

function withParsedArguments(input: unknown): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
  const inner = (input as { arguments?: unknown }).arguments;
  if (typeof inner !== 'string') return input;
  try {
    const parsed: unknown = JSON.parse(inner);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? { ...input, arguments: parsed }
      : input;
  } catch {
    return input;
  }
}
