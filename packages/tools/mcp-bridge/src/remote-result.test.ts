import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { checkContent as contractCheck, type InvokeSuccess } from '@aptix/tool-contract';
import { BridgeErrorCode } from './codes.js';
import { invalidResultSummary, toInvokeResult } from './remote-result.js';

const spec = { name: 'files_read', server: 'files', remoteName: 'read' };
const context = { sessionId: 's-1' };

// Results the SDK client refuses never get here; these are what a looser client (or a later SDK) could hand over.
describe('toInvokeResult', () => {
  it('says in text what it cannot pass on (an unknown block type, a block that is not an object), and never sends it as a block', () => {
    const result = toInvokeResult(
      spec,
      {
        content: [{ type: 'hologram', data: 'x' }, null, { type: 'image', data: 'AAAA', mimeType: 'image/png' }],
      } as unknown as CallToolResult,
      context,
    ) as InvokeSuccess<string>;
    expect(result.successful).toBe(true);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: '[MCP server "files" sent a content block of type "hologram", which this host cannot pass on; it was left out.]',
      },
      {
        type: 'text',
        text: '[MCP server "files" sent a content block without a type, which this host cannot pass on; it was left out.]',
      },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
    ]);
    expect(contractCheck(result.content).ok).toBe(true);
    expect(JSON.parse(result.result)).toMatchObject({ sessionId: 's-1', conversationId: null });
  });

  it('bounds what a resource link puts into its text', () => {
    const result = toInvokeResult(
      spec,
      {
        content: [{ type: 'resource_link', uri: 'file:///a', name: 'n'.repeat(50_000), description: 42 }],
      } as unknown as CallToolResult,
      context,
    ) as InvokeSuccess<string>;
    const text = (result.content![0] as { text: string }).text;
    expect(text.length).toBeLessThan(1_200);
    expect(JSON.parse(result.result).content[0]).toEqual({
      type: 'resource_link',
      uri: 'file:///a',
      name: expect.stringMatching(/^n{999}…$/),
    });
  });

  it('refuses a document with both text and bytes, naming the remote tool', () => {
    const result = toInvokeResult(
      spec,
      {
        content: [{ type: 'resource', resource: { uri: 'file:///a', text: 'a', blob: 'AAAA' } }],
      } as unknown as CallToolResult,
      context,
    );
    expect(result.errors[0]).toEqual({
      code: BridgeErrorCode.REMOTE_MALFORMED_RESULT,
      message: expect.stringContaining(
        `files_read: MCP server "files" answered "read" with content that cannot be passed on: content block 0 ("resource") needs exactly one of 'resource.text'`,
      ),
    });
  });
});

describe('invalidResultSummary', () => {
  it('names the paths and problems of the first issues', () => {
    const issues = [
      { code: 'custom', path: ['content', 1, 'data'], message: 'Invalid Base64 string' },
      { code: 'invalid_union', path: ['content', 2], message: 'Invalid input', errors: [] },
      { code: 'invalid_type', path: ['isError'], message: 'expected boolean' },
      { code: 'invalid_type', path: [], message: 'x' },
    ];
    expect(invalidResultSummary(`Invalid result for tools/call: ${JSON.stringify(issues, null, 2)}`)).toBe(
      'content[1].data: Invalid Base64 string; content[2] is not a content block MCP defines ' +
        '(text, image, audio, resource, resource_link), or misses one of its fields; isError: ' +
        'expected boolean (and 1 more)',
    );
  });

  it('falls back to the message, bounded, when it carries no issues', () => {
    expect(invalidResultSummary('Invalid result for tools/call: not an object')).toBe(
      'Invalid result for tools/call: not an object',
    );
    expect(invalidResultSummary(`Invalid result: [${'x'.repeat(2_000)}`)).toHaveLength(500);
  });
});
