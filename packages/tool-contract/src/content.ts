/**
 * Content beyond JSON text: the blocks a tool may return besides (or instead of) its JSON result, in
 * MCP's shapes (`text`, `image`, `audio`, `resource`). Build them with {@link Content} and return them
 * with `InvokeResult.withContent`; the executor checks every block before anything is sent.
 */

/** Plain text, shown to the model as it is. */
export interface TextContent {
  readonly type: 'text';
  readonly text: string;
}

/** An image: base64 bytes and an `image/*` media type. */
export interface ImageContent {
  readonly type: 'image';
  /** Standard base64 (RFC 4648 §4, padded). */
  readonly data: string;
  readonly mimeType: string;
}

/** A sound: base64 bytes and an `audio/*` media type. */
export interface AudioContent {
  readonly type: 'audio';
  readonly data: string;
  readonly mimeType: string;
}

/** A document embedded in the result, by URI, as text or as base64 bytes (`blob`). */
export interface EmbeddedResourceContent {
  readonly type: 'resource';
  readonly resource:
    | { readonly uri: string; readonly mimeType?: string; readonly text: string }
    | { readonly uri: string; readonly mimeType?: string; readonly blob: string };
}

/** One block of a tool's content. */
export type ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResourceContent;

/** The block types the contract knows, in the order the docs list them. */
export const CONTENT_BLOCK_TYPES = ['text', 'image', 'audio', 'resource'] as const;
/** At most this many blocks in one result. */
export const MAX_CONTENT_BLOCKS = 256;
/** Counted per block on top of its data, for the fields around it, so many tiny blocks still meet the size bound. */
const BLOCK_OVERHEAD_BYTES = 64;

/** Bytes as base64, or base64 text as given (the executor checks it). */
function base64(data: string | Uint8Array): string {
  return typeof data === 'string'
    ? data
    : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
}

/**
 * Builders for content blocks. Bytes (a Buffer or Uint8Array) are base64-encoded; a string is taken as
 * base64 already, and checked by the executor.
 *
 * @example
 * return InvokeResult.withContent([Content.text('The chart:'), Content.image(png, 'image/png')], { points: 12 });
 */
export const Content = {
  text(text: string): TextContent {
    return { type: 'text', text };
  },
  image(data: string | Uint8Array, mimeType: string): ImageContent {
    return { type: 'image', data: base64(data), mimeType };
  },
  audio(data: string | Uint8Array, mimeType: string): AudioContent {
    return { type: 'audio', data: base64(data), mimeType };
  },
  /** A text document (`{ text }`) or a binary one (`{ blob }`: bytes, or base64 text). */
  resource(
    uri: string,
    body: { readonly text: string } | { readonly blob: string | Uint8Array },
    mimeType?: string,
  ): EmbeddedResourceContent {
    const resource = 'text' in body ? { uri, text: body.text } : { uri, blob: base64(body.blob) };
    return { type: 'resource', resource: mimeType === undefined ? resource : { ...resource, mimeType } };
  },
} as const;

// ---------------------------------------------------------------------------------------------
// Checks: what the executor runs on every block a tool returns
// ---------------------------------------------------------------------------------------------

/** `type/subtype`, with optional `; name=value` parameters (RFC 6838 §4.2 names). */
const MIME_TYPE =
  /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(?:\s*;\s*[A-Za-z0-9!#$&^_.+-]+=(?:[A-Za-z0-9!#$&^_.+-]+|"[^"\\\r\n]*"))*$/;
const NOT_BASE64 = /[^A-Za-z0-9+/]/;
/** A URI with a scheme (RFC 3986 §3.1) and no whitespace or control characters. */
// eslint-disable-next-line no-control-regex -- control characters are matched on purpose, to refuse or escape them
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\u0000-\u001f\u007f]*$/;
const MAX_URI_LENGTH = 8192;

/** True for a media type `type/subtype` with optional parameters (RFC 6838 names), at most 255 characters. */
export function isMediaType(text: unknown): text is string {
  return typeof text === 'string' && text.length <= 255 && MIME_TYPE.test(text);
}

const FIELDS: Readonly<Record<string, readonly string[]>> = {
  text: ['type', 'text'],
  image: ['type', 'data', 'mimeType'],
  audio: ['type', 'data', 'mimeType'],
  resource: ['type', 'resource'],
};

/** True for standard, padded base64 (what MCP and OpenAI expect); the empty string is not. */
export function isBase64(text: string): boolean {
  if (text.length === 0 || text.length % 4 !== 0) return false;
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return !NOT_BASE64.test(pad === 0 ? text : text.slice(0, -pad));
}

/** The outcome of checking a tool's content: its size, or what is wrong with the first bad block. */
export type ContentCheck =
  | { readonly ok: true; readonly bytes: number; readonly blocks: readonly ContentBlock[] }
  /** `tooLarge`: the blocks pass `maxBytes`, found before their data was read (their base64 is not checked). */
  | { readonly ok: false; readonly problem: string; readonly tooLarge?: true };

/**
 * Checks content a tool returned: an array of at most {@link MAX_CONTENT_BLOCKS} known blocks, each
 * with exactly its fields, valid base64, a media type of the block's kind, a URI with a scheme. Answers
 * with plain copies of the blocks (no getters, no prototypes) and their size in bytes as sent.
 */
export function checkContent(content: unknown, maxBytes = Infinity): ContentCheck {
  if (!Array.isArray(content))
    return { ok: false, problem: `content must be an array of blocks, got ${kind(content)}` };
  if (content.length === 0)
    return { ok: false, problem: 'content is an empty array; leave it out, or give at least one block' };
  if (content.length > MAX_CONTENT_BLOCKS)
    return { ok: false, problem: `content has ${content.length} blocks; at most ${MAX_CONTENT_BLOCKS} are allowed` };
  const blocks: ContentBlock[] = [];
  let bytes = 0;
  for (let i = 0; i < content.length; i++) {
    // Over the bound already by the length of its strings: refused without scanning megabytes of base64.
    if (bytes + lengthOf(content[i]) > maxBytes)
      return {
        ok: false,
        tooLarge: true,
        problem: `content block ${i}${blockType(content[i])} takes the content past ${maxBytes} bytes`,
      };
    const checked = checkBlock(content[i]);
    if (typeof checked === 'string')
      return { ok: false, problem: `content block ${i}${blockType(content[i])} ${checked}` };
    blocks.push(checked.block);
    bytes += checked.bytes + BLOCK_OVERHEAD_BYTES;
  }
  return { ok: true, bytes, blocks };
}

/** A lower bound of a block's size in bytes: the lengths of its strings (a UTF-16 unit is at least one UTF-8 byte). */
function lengthOf(block: unknown): number {
  if (block === null || typeof block !== 'object') return 0;
  const { text, data, resource } = block as {
    text?: unknown;
    data?: unknown;
    resource?: { text?: unknown; blob?: unknown } | null;
  };
  const strings = [text, data, resource?.text, resource?.blob];
  return strings.reduce<number>((sum, value) => sum + (typeof value === 'string' ? value.length : 0), 0);
}

function blockType(block: unknown): string {
  const type = (block as { type?: unknown } | null)?.type;
  return typeof type === 'string' && type.length <= 40 ? ` (${JSON.stringify(type)})` : '';
}

function kind(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

function checkBlock(block: unknown): { block: ContentBlock; bytes: number } | string {
  if (block === null || typeof block !== 'object' || Array.isArray(block))
    return `is ${kind(block)}, not a block object like { type: 'text', text: '…' }`;
  const record = block as Record<string, unknown>;
  const type = record.type;
  const fields = typeof type === 'string' ? FIELDS[type] : undefined;
  if (fields === undefined || !Object.hasOwn(FIELDS, type as string)) {
    return `has an unknown type; a block's type is one of ${CONTENT_BLOCK_TYPES.join(', ')} (build blocks with Content.text, Content.image, Content.audio or Content.resource)`;
  }
  const extra = Object.keys(record).find((key) => !fields.includes(key));
  if (extra !== undefined)
    return `has a field '${extra.slice(0, 40)}' that a ${String(type)} block does not have (its fields: ${fields.join(', ')})`;
  switch (type) {
    case 'text': {
      if (typeof record.text !== 'string') return `needs 'text' as a string, got ${kind(record.text)}`;
      return { block: { type: 'text', text: record.text }, bytes: Buffer.byteLength(record.text, 'utf8') };
    }
    case 'image':
    case 'audio': {
      const { data, mimeType } = record;
      const problem = checkData(data, 'data') ?? checkMimeType(mimeType, type);
      if (problem !== undefined) return problem;
      return {
        block: { type, data: data as string, mimeType: mimeType as string },
        bytes: (data as string).length + (mimeType as string).length,
      };
    }
    default:
      return checkResource(record.resource);
  }
}

function checkData(data: unknown, field: string): string | undefined {
  if (typeof data !== 'string')
    return `needs '${field}' as a base64 string, got ${kind(data)} (Content.image and Content.audio encode bytes for you)`;
  if (!isBase64(data))
    return `has '${field}' that is not valid base64 (standard alphabet A-Z a-z 0-9 + /, padded with = to a multiple of 4 characters, not empty)`;
  return undefined;
}

function checkMimeType(mimeType: unknown, type: 'image' | 'audio' | undefined): string | undefined {
  if (typeof mimeType !== 'string')
    return `needs 'mimeType' as a string such as ${type === 'audio' ? "'audio/wav'" : "'image/png'"}, got ${kind(mimeType)}`;
  if (mimeType.length > 255 || !MIME_TYPE.test(mimeType))
    return `has mimeType ${JSON.stringify(mimeType.slice(0, 80))}, which is not a media type of the form type/subtype`;
  if (type !== undefined && !mimeType.toLowerCase().startsWith(`${type}/`))
    return `has mimeType ${JSON.stringify(mimeType)}, but an ${type} block needs an ${type}/* type (for other files, use Content.resource)`;
  return undefined;
}

function checkResource(resource: unknown): { block: ContentBlock; bytes: number } | string {
  if (resource === null || typeof resource !== 'object' || Array.isArray(resource))
    return `needs 'resource' as an object { uri, mimeType?, text | blob }, got ${kind(resource)}`;
  const { uri, mimeType, text, blob, ...rest } = resource as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (extra !== undefined)
    return `has a resource field '${extra.slice(0, 40)}' that is not allowed (its fields: uri, mimeType, text or blob)`;
  if (typeof uri !== 'string' || uri.length > MAX_URI_LENGTH || !URI.test(uri))
    return `needs 'resource.uri' as an absolute URI with a scheme (like 'file:///report.csv'), got ${typeof uri === 'string' ? JSON.stringify(uri.slice(0, 80)) : kind(uri)}`;
  if (mimeType !== undefined) {
    const problem = checkMimeType(mimeType, undefined);
    if (problem !== undefined) return problem.replace("'mimeType'", "'resource.mimeType'");
  }
  if ((text === undefined) === (blob === undefined))
    return `needs exactly one of 'resource.text' (a string) and 'resource.blob' (base64 bytes)`;
  const meta = uri.length + (typeof mimeType === 'string' ? mimeType.length : 0);
  const typed = mimeType === undefined ? {} : { mimeType: mimeType as string };
  if (text !== undefined) {
    if (typeof text !== 'string') return `needs 'resource.text' as a string, got ${kind(text)}`;
    return {
      block: { type: 'resource', resource: { uri, ...typed, text } },
      bytes: meta + Buffer.byteLength(text, 'utf8'),
    };
  }
  const problem = checkData(blob, 'resource.blob');
  if (problem !== undefined) return problem;
  return {
    block: { type: 'resource', resource: { uri, ...typed, blob: blob as string } },
    bytes: meta + (blob as string).length,
  };
}

/**
 * The text view of content for callers that take text only (Chat Completions, a plain JSON client):
 * JSON with the text blocks as they are, and the other blocks described (kind, media type, size, URI)
 * without their data. It is the `result` of `InvokeResult.withContent` when the tool gives none.
 */
export function describeContent(blocks: readonly ContentBlock[]): { content: unknown[] } {
  // Tolerant: malformed blocks are described as well as they can be, and the executor then refuses them clearly.
  return { content: Array.isArray(blocks) ? blocks.map(describeBlock) : [] };
}

function describeBlock(block: ContentBlock): unknown {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (block === null || typeof block !== 'object') return { type: 'unknown' };
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
    case 'audio':
      return { type: block.type, mimeType: block.mimeType, bytes: decodedSize(block.data) };
    case 'resource': {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      const resource = (block.resource ?? {}) as { uri?: string; mimeType?: string; text?: string; blob?: string };
      const typed = resource.mimeType === undefined ? {} : { mimeType: resource.mimeType };
      return resource.text !== undefined
        ? { type: 'resource', uri: resource.uri, ...typed, text: resource.text }
        : { type: 'resource', uri: resource.uri, ...typed, bytes: decodedSize(resource.blob) };
    }
    default:
      return {
        type: typeof (block as { type?: unknown }).type === 'string' ? (block as { type: string }).type : 'unknown',
      };
  }
}

/** The number of bytes base64 text decodes to. */
function decodedSize(data: string | undefined): number {
  if (typeof data !== 'string') return 0;
  const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, (data.length / 4) * 3 - pad);
}
