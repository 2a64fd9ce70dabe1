import type { CallToolResult } from '@modelcontextprotocol/client';
import {
  checkContent,
  describeContent,
  InvokeResult,
  type AgentToolExecutionContext,
  type ContentBlock,
} from '@aptix/tool-contract';
import { BridgeErrorCode } from './codes.js';

const MAX_MESSAGE_LENGTH = 4_000;
/** The most characters of a resource link's name, title or description put into its text. */
const MAX_LINK_FIELD = 1_000;

/** Which remote tool a result came from, for the messages. */
export interface RemoteToolRef {
  /** The Aptix tool name. */
  readonly name: string;
  /** The MCP server's name (the bridge options' `name`). */
  readonly server: string;
  /** The tool's name on the server, named in messages about its answers when given. */
  readonly remoteName?: string;
}

/**
 * A remote tool's result as an InvokeResult:
 * - `isError` becomes a failure (`REMOTE_TOOL_ERROR`) with the server's text;
 * - a result of text blocks only is JSON text, `{ content, structuredContent?, sessionId, conversationId }`, as it always was;
 * - any other (images, audio, embedded resources, resource links, mixed) is passed on as content blocks
 *   (`InvokeResult.withContent`), with that same JSON, in which the blocks are described without their data;
 * - content that no caller could be sent (bad base64, an image whose media type is not `image/*`…) is a
 *   failure (`REMOTE_MALFORMED_RESULT`) naming the remote tool, the block and the rule.
 */
export function toInvokeResult(
  spec: RemoteToolRef,
  result: CallToolResult,
  context: AgentToolExecutionContext,
): InvokeResult<string> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (result === null || typeof result !== 'object' || !Array.isArray(result.content)) {
    return InvokeResult.fromError(
      `${spec.name}: MCP server "${spec.server}" answered with something that is not a tool result.`,
      BridgeErrorCode.REMOTE_MALFORMED_RESULT,
    );
  }
  if (result.isError === true) {
    const text = bounded(contentText(result.content));
    return InvokeResult.fromError(
      `${spec.name}: ${text || `MCP server "${spec.server}" reported an error without a message.`}`,
      BridgeErrorCode.REMOTE_TOOL_ERROR,
    );
  }
  const ids = { sessionId: context.sessionId ?? null, conversationId: context.conversationId ?? null };
  const structured = result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent };
  if (result.content.every(isTextBlock))
    return InvokeResult.create(JSON.stringify({ content: result.content, ...structured, ...ids }));

  const converted = result.content.map((block) => convertBlock(spec, block));
  const checked = checkContent(converted.map((entry) => entry.block));
  if (!checked.ok) {
    return InvokeResult.fromError(
      `${spec.name}: MCP server "${spec.server}" answered${remote(spec)} with content that cannot be passed on: ${checked.problem}. ` +
        'The call reached the server and the tool ran there; nothing of its answer was sent. The server needs fixing; calling again will likely get the same answer.',
      BridgeErrorCode.REMOTE_MALFORMED_RESULT,
    );
  }
  const described = converted.map((entry, i) => entry.described ?? describeContent([checked.blocks[i]!]).content[0]);
  return InvokeResult.withContent(checked.blocks, { content: described, ...structured, ...ids });
}

/** A remote block as a contract block, plus how the JSON value describes it when not as that block. */
function convertBlock(spec: RemoteToolRef, block: unknown): { block: ContentBlock; described?: unknown } {
  const record = (block !== null && typeof block === 'object' ? block : {}) as Record<string, unknown>;
  switch (record.type) {
    // Only the fields the contract knows are passed on: MCP's `annotations` and `_meta` are left out.
    case 'text':
      return { block: { type: 'text', text: record.text as string } };
    case 'image':
    case 'audio':
      return { block: { type: record.type, data: record.data as string, mimeType: record.mimeType as string } };
    case 'resource': {
      const { uri, mimeType, text, blob } = (record.resource ?? {}) as Record<string, unknown>;
      const typed = mimeType === undefined ? {} : { mimeType };
      const body = text === undefined ? { blob } : blob === undefined ? { text } : { text, blob };
      return { block: { type: 'resource', resource: { uri, ...typed, ...body } as never } };
    }
    case 'resource_link':
      return resourceLink(spec, record);
    default: {
      // A type the SDK client let through but no caller knows: said in text, never sent as a block.
      const what =
        typeof record.type === 'string' ? `of type ${JSON.stringify(record.type.slice(0, 40))}` : 'without a type';
      return {
        block: {
          type: 'text',
          text: `[MCP server "${spec.server}" sent a content block ${what}, which this host cannot pass on; it was left out.]`,
        },
      };
    }
  }
}

/**
 * A resource link points at a resource on the server, which callers of the host cannot read: it is
 * passed on as a text block saying what it names, and kept in the JSON value as the link's fields.
 */
function resourceLink(spec: RemoteToolRef, link: Record<string, unknown>): { block: ContentBlock; described: unknown } {
  const field = (key: string, max = MAX_LINK_FIELD) =>
    typeof link[key] === 'string' ? bounded(link[key] as string, max) : undefined;
  const uri = field('uri', 8_192) ?? '';
  const name = field('name');
  const title = field('title');
  const description = field('description');
  const mimeType = field('mimeType', 255);
  const size = typeof link.size === 'number' && Number.isFinite(link.size) ? link.size : undefined;
  const what = [title ?? name, mimeType, size === undefined ? undefined : `${size} bytes`]
    .filter((part) => part !== undefined)
    .join(', ');
  const text =
    `[Resource link from MCP server "${spec.server}": ` +
    `${uri}${what ? ` (${what})` : ''}${description ? ` — ${description}` : ''}. The link is ` +
    `passed on as this text; the host did not read the resource.]`;
  const fields = Object.fromEntries(
    Object.entries({ uri, name, title, description, mimeType, size }).filter(([, value]) => value !== undefined),
  );
  return { block: { type: 'text', text }, described: { type: 'resource_link', ...fields } };
}

function isTextBlock(block: unknown): boolean {
  return block !== null && typeof block === 'object' && (block as { type?: unknown }).type === 'text';
}

function remote(spec: RemoteToolRef): string {
  return spec.remoteName === undefined ? '' : ` "${spec.remoteName}"`;
}

/** The text of the text blocks, for an error's message. */
export function contentText(content: CallToolResult['content']): string {
  return content
    .map((block) =>
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      block && typeof block === 'object' && block.type === 'text' && typeof block.text === 'string' ? block.text : '',
    )
    .filter((text) => text.trim() !== '')
    .join('\n');
}

export function bounded(text: string, max = MAX_MESSAGE_LENGTH): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * What the SDK client found wrong with a result it refused (`SdkErrorCode.InvalidResult`), in a line:
 * its message carries zod's issues as JSON (`Invalid result for tools/call: [{ path, message }…]`).
 */
export function invalidResultSummary(message: string): string {
  const start = message.indexOf('[');
  let issues: unknown;
  try {
    issues = start < 0 ? undefined : JSON.parse(message.slice(start));
  } catch {
    issues = undefined;
  }
  if (!Array.isArray(issues) || issues.length === 0) return bounded(message, 500);
  const lines = issues.slice(0, 3).map((issue: { code?: unknown; path?: unknown; message?: unknown }) => {
    const path = Array.isArray(issue.path)
      ? issue.path
          .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
          .join('')
      : '';
    const blockProblem = issue.code === 'invalid_union' && /^content\[\d+\]$/.test(path);
    const what = blockProblem
      ? 'is not a content block MCP defines (text, image, audio, resource, resource_link), or misses one of its fields'
      : String(issue.message ?? 'is invalid');
    return bounded(`${path || 'the result'}${blockProblem ? ' ' : ': '}${what}`, 300);
  });
  return `${lines.join('; ')}${issues.length > 3 ? ` (and ${issues.length - 3} more)` : ''}`;
}
