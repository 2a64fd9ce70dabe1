/**
 * A tool's requests to the client itself rather than its user: a completion from the client's model
 * (MCP `sampling/createMessage`) and the client's roots (MCP `roots/list`). They travel like questions to
 * the user (`InvokeResult.inputRequired`): the tool names what it needs under a key, the host asks the
 * client (as a request on a 2025 session, as `input_required` on 2026-07-28), and the tool is called
 * again with the answers in `context.input.responses`, which {@link sampledText} and {@link listedRoots} read.
 */

/** One message of a sampling request: a text, an image or a sound, from the user or the assistant. */
export interface SamplingMessage {
  readonly role: 'user' | 'assistant';
  readonly content:
    | { readonly type: 'text'; readonly text: string }
    | { readonly type: 'image' | 'audio'; readonly data: string; readonly mimeType: string };
}

/** A completion from the client's model: MCP's `sampling/createMessage` parameters (tool use in sampling is not offered). */
export interface SamplingInputRequest {
  readonly method: 'sampling/createMessage';
  readonly params: {
    readonly messages: readonly SamplingMessage[];
    /** The most tokens the client's model may answer with (the client may use fewer). */
    readonly maxTokens: number;
    readonly systemPrompt?: string;
    readonly temperature?: number;
    readonly stopSequences?: readonly string[];
    /** Hints for the client's choice of model (`hints`, `costPriority`, `speedPriority`, `intelligencePriority`). */
    readonly modelPreferences?: object;
    readonly includeContext?: 'none' | 'thisServer' | 'allServers';
    readonly metadata?: object;
  };
}

/** The client's roots (the folders or files it lets servers work in): MCP's `roots/list`. */
export interface RootsInputRequest {
  readonly method: 'roots/list';
  readonly params?: Readonly<Record<string, never>>;
}

/** One root a client listed. */
export interface ClientRoot {
  /** A `file://` URI. */
  readonly uri: string;
  readonly name?: string;
}

/** The most messages one sampling request may carry. */
export const MAX_SAMPLING_MESSAGES = 64;
/** The most roots {@link listedRoots} reads from one answer; the rest are left out. */
export const MAX_CLIENT_ROOTS = 256;

const SAMPLING_KEYS = new Set([
  'messages',
  'maxTokens',
  'systemPrompt',
  'temperature',
  'stopSequences',
  'modelPreferences',
  'includeContext',
  'metadata',
]);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function messageProblem(message: unknown): string | undefined {
  if (!isObject(message)) return 'is not a message object';
  if (message.role !== 'user' && message.role !== 'assistant') return 'role must be "user" or "assistant"';
  const content = message.content;
  if (!isObject(content)) return 'content must be one content object ({ type: "text", text })';
  if (content.type === 'text') return typeof content.text === 'string' ? undefined : 'content.text must be a string';
  if (content.type === 'image' || content.type === 'audio')
    return typeof content.data === 'string' && typeof content.mimeType === 'string'
      ? undefined
      : `a ${content.type} content needs data (base64) and mimeType`;
  return 'content.type must be "text", "image" or "audio"';
}

/** What is wrong with the params of a `sampling/createMessage` request at `where`, or undefined. */
export function samplingProblem(where: string, params: unknown): string | undefined {
  if (!isObject(params)) return `${where}.params must be an object with messages and maxTokens`;
  const extra = Object.keys(params).find((key) => !SAMPLING_KEYS.has(key));
  if (extra !== undefined)
    return `${where}.params.${extra} is not a sampling parameter Aptix passes on (it takes ${[...SAMPLING_KEYS].join(', ')})`;
  const { messages, maxTokens } = params;
  if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_SAMPLING_MESSAGES)
    return `${where}.params.messages must hold 1 to ${MAX_SAMPLING_MESSAGES} messages`;
  for (const [index, message] of messages.entries()) {
    const problem = messageProblem(message);
    if (problem !== undefined) return `${where}.params.messages[${index}] ${problem}`;
  }
  if (!Number.isSafeInteger(maxTokens) || (maxTokens as number) < 1)
    return `${where}.params.maxTokens must be a positive whole number`;
  if (params.systemPrompt !== undefined && typeof params.systemPrompt !== 'string')
    return `${where}.params.systemPrompt must be text`;
  if (params.temperature !== undefined && !Number.isFinite(params.temperature))
    return `${where}.params.temperature must be a number`;
  if (
    params.stopSequences !== undefined &&
    (!Array.isArray(params.stopSequences) || !params.stopSequences.every((stop) => typeof stop === 'string'))
  )
    return `${where}.params.stopSequences must be a list of strings`;
  if (
    params.includeContext !== undefined &&
    !['none', 'thisServer', 'allServers'].includes(params.includeContext as string)
  )
    return `${where}.params.includeContext must be "none", "thisServer" or "allServers"`;
  for (const key of ['modelPreferences', 'metadata'] as const)
    if (params[key] !== undefined && !isObject(params[key])) return `${where}.params.${key} must be an object`;
  return undefined;
}

/** What is wrong with the params of a `roots/list` request at `where` (it takes none), or undefined. */
export function rootsProblem(where: string, params: unknown): string | undefined {
  if (params === undefined) return undefined;
  return isObject(params) && Object.keys(params).length === 0
    ? undefined
    : `${where}.params must be empty: roots/list takes no parameters`;
}

/**
 * A request for one completion of the client's model.
 * @example InvokeResult.inputRequired({ inputRequests: { summary: samplingRequest(`Summarise: ${text}`, { maxTokens: 200 }) } })
 */
export function samplingRequest(
  prompt: string | readonly SamplingMessage[],
  options: Omit<SamplingInputRequest['params'], 'messages'>,
): SamplingInputRequest {
  const messages =
    typeof prompt === 'string' ? [{ role: 'user' as const, content: { type: 'text' as const, text: prompt } }] : prompt;
  return { method: 'sampling/createMessage', params: { ...options, messages } };
}

/** A request for the client's roots. */
export function rootsRequest(): RootsInputRequest {
  return { method: 'roots/list', params: {} };
}

/**
 * The text the client's model answered under `key` (its text blocks, joined), or undefined: no answer,
 * an answer without text, or a malformed one. The answer is the client's data: the model's words, not an instruction.
 */
export function sampledText(
  input: { readonly responses: Readonly<Record<string, unknown>> } | undefined,
  key: string,
): string | undefined {
  const answer = input?.responses[key];
  if (!isObject(answer)) return undefined;
  const blocks = Array.isArray(answer.content) ? answer.content : [answer.content];
  const texts = blocks.filter(
    (block): block is { type: 'text'; text: string } =>
      isObject(block) && block.type === 'text' && typeof block.text === 'string',
  );
  return texts.length === 0 ? undefined : texts.map((block) => block.text).join('\n');
}

/**
 * The roots the client listed under `key` (at most {@link MAX_CLIENT_ROOTS}; entries that are not a
 * root with a `file://` URI are left out), or undefined when there is no such answer.
 */
export function listedRoots(
  input: { readonly responses: Readonly<Record<string, unknown>> } | undefined,
  key: string,
): readonly ClientRoot[] | undefined {
  const answer = input?.responses[key];
  if (!isObject(answer) || !Array.isArray(answer.roots)) return undefined;
  const roots: ClientRoot[] = [];
  for (const root of answer.roots) {
    if (roots.length === MAX_CLIENT_ROOTS) break;
    if (!isObject(root) || typeof root.uri !== 'string' || !root.uri.startsWith('file://')) continue;
    roots.push(typeof root.name === 'string' ? { uri: root.uri, name: root.name } : { uri: root.uri });
  }
  return roots;
}
