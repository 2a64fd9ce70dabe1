import type { CallToolResult } from '@modelcontextprotocol/server';
import type { InvokeSuccess } from '@aptix/tool-contract';

/**
 * A successful tool result as MCP's `CallToolResult`, the same on both protocol revisions:
 * - `content`: the tool's content blocks as they are (the executor checked them), or one text block with the result JSON;
 * - `structuredContent`: the result JSON parsed, only for a tool that declares an output schema (the
 *   executor checked the value against it); its text block then carries the same JSON, as MCP asks
 *   for clients that read only `content`.
 */
export function callToolResult(result: InvokeSuccess<string>, structured: boolean): CallToolResult {
  const blocks = result.content;
  const content = (
    blocks === undefined
      ? [{ type: 'text', text: result.result }]
      : structured
        ? [...blocks, { type: 'text', text: result.result }]
        : blocks
  ) as CallToolResult['content'];
  return structured
    ? { content, structuredContent: JSON.parse(result.result) as Record<string, unknown> }
    : { content };
}
