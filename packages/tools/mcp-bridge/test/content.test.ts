import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ExecutionErrorCode, modelContentParts, type InvokeSuccess } from '@aptix/tool-contract';
import { BridgeErrorCode } from '../src/index.js';
import { bridgeHarness, CONTENT, EVERYTHING, RAW_CONTENT } from './servers.js';

type Harness = Awaited<ReturnType<typeof bridgeHarness>>;

/** What a plain MCP client (the SDK's, no bridge) gets from the same server, for comparison. */
async function directCall(
  args: string[],
  name: string,
  toolArgs: Record<string, unknown> = {},
  pin?: '2026-07-28',
): Promise<CallToolResult> {
  const client = new Client(
    { name: 'direct', version: '1.0.0' },
    pin === undefined ? { versionNegotiation: { mode: 'legacy' } } : { versionNegotiation: { mode: { pin } } },
  );
  await client.connect(new StdioClientTransport({ command: process.execPath, args }));
  try {
    return await client.callTool({ name, arguments: toolArgs });
  } finally {
    await client.close();
  }
}

/** MCP blocks without `annotations` and `_meta`, the two fields the contract's blocks do not carry. */
function withoutMetadata(content: CallToolResult['content']): unknown[] {
  return content.map((block) => {
    const { annotations: _a, _meta: _m, ...rest } = block as Record<string, unknown>;
    if (rest.type !== 'resource') return rest;
    const { _meta: _rm, ...resource } = rest.resource as Record<string, unknown>;
    return { ...rest, resource };
  });
}

describe('content beyond text from server-everything (stdio)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await bridgeHarness({ name: 'everything', stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
  });
  afterAll(() => h?.bridge.close());

  it('answers a text-only result as the same JSON text as before, with no content blocks', async () => {
    const result = await h.call('everything_echo', { message: 'hi' });
    expect(result.successful && result.result).toBe(
      JSON.stringify({ content: [{ type: 'text', text: 'Echo: hi' }], sessionId: 's-1', conversationId: 'c-1' }),
    );
    expect((result as InvokeSuccess<string>).content).toBeUndefined();
  });

  it('passes an image on as the blocks the server sent, and describes them in the JSON without their data', async () => {
    const result = await h.call('everything_get_tiny_image', {});
    expect(result.successful).toBe(true);
    const direct = await directCall([EVERYTHING, 'stdio'], 'get-tiny-image');
    const blocks = (result as InvokeSuccess<string>).content!;
    expect(blocks).toEqual(direct.content);
    expect(blocks.map((block) => block.type)).toEqual(['text', 'image', 'text']);
    expect(result.value).toEqual({
      content: [
        { type: 'text', text: "Here's the image you requested:" },
        {
          type: 'image',
          mimeType: 'image/png',
          bytes: Buffer.from((blocks[1] as { data: string }).data, 'base64').length,
        },
        { type: 'text', text: 'The image above is the MCP logo.' },
      ],
      sessionId: 's-1',
      conversationId: 'c-1',
    });
    expect(result.result).not.toContain((blocks[1] as { data: string }).data.slice(0, 40));
    // The agent loop gets the image itself (a Responses API input_image), after the JSON value.
    const parts = modelContentParts(result as InvokeSuccess<string>)!;
    expect(parts.map((part) => part.type)).toEqual(['text', 'text', 'image', 'text']);
    expect(parts[2]).toEqual({
      type: 'image',
      data: (direct.content[1] as { data: string }).data,
      mimeType: 'image/png',
    });
  });

  it('passes embedded documents on, text and binary', async () => {
    const textual = await h.call('everything_get_resource_reference', { resourceType: 'Text', resourceId: 2 });
    const textBlock = (textual as InvokeSuccess<string>).content![1];
    expect(textBlock).toEqual({
      type: 'resource',
      resource: {
        uri: 'demo://resource/dynamic/text/2',
        mimeType: 'text/plain',
        text: expect.stringContaining('Resource 2: This is a plaintext resource'),
      },
    });
    expect((textual.value?.content as unknown[])[1]).toEqual({
      type: 'resource',
      uri: 'demo://resource/dynamic/text/2',
      mimeType: 'text/plain',
      text: expect.stringContaining('plaintext resource'),
    });

    const binary = await h.call('everything_get_resource_reference', { resourceType: 'Blob', resourceId: 3 });
    const blobBlock = (binary as InvokeSuccess<string>).content![1] as { resource: { uri: string; blob: string } };
    expect(blobBlock.resource.uri).toBe('demo://resource/dynamic/blob/3');
    expect(Buffer.from(blobBlock.resource.blob, 'base64').toString()).toContain('Resource 3: This is a base64 blob');
  });

  it('passes a gzip archive the server made on as a binary document whose bytes unpack to the input', async () => {
    const input = 'Bridged bytes survive the trip.\n'.repeat(20);
    const result = await h.call('everything_gzip_file_as_resource', {
      name: 'notes.txt.gz',
      data: `data:text/plain;base64,${Buffer.from(input).toString('base64')}`,
      outputType: 'resource',
    });
    expect(result.successful).toBe(true);
    const [block] = (result as InvokeSuccess<string>).content!;
    expect(block).toMatchObject({
      type: 'resource',
      resource: { mimeType: 'application/gzip', uri: expect.stringContaining('notes.txt.gz') },
    });
    expect(gunzipSync(Buffer.from((block as { resource: { blob: string } }).resource.blob, 'base64')).toString()).toBe(
      input,
    );
  });

  it('says what a resource link names, in text, and keeps its fields in the JSON', async () => {
    const result = await h.call('everything_get_resource_links', { count: 2 });
    expect(result.successful).toBe(true);
    const blocks = (result as InvokeSuccess<string>).content!;
    expect(blocks.map((block) => block.type)).toEqual(['text', 'text', 'text']);
    expect((blocks[1] as { text: string }).text).toBe(
      '[Resource link from MCP server "everything": demo://resource/dynamic/blob/1 (Blob ' +
        'Resource 1, text/plain) — Resource 1: plaintext resource. The link is passed on as this ' +
        'text; the host did not read the resource.]',
    );
    expect((result.value?.content as unknown[])[2]).toEqual({
      type: 'resource_link',
      uri: 'demo://resource/dynamic/text/2',
      name: 'Text Resource 2',
      description: 'Resource 2: plaintext resource',
      mimeType: 'text/plain',
    });
  });

  it('leaves out the annotations of blocks, which the contract does not carry, and passes the rest', async () => {
    const result = await h.call('everything_get_annotated_message', { messageType: 'success', includeImage: true });
    const direct = await directCall([EVERYTHING, 'stdio'], 'get-annotated-message', {
      messageType: 'success',
      includeImage: true,
    });
    expect((direct.content[1] as { annotations?: unknown }).annotations).toBeDefined();
    expect((result as InvokeSuccess<string>).content).toEqual(withoutMetadata(direct.content));
  });
});

describe('content from a server on the v2 SDK, on both protocol revisions', () => {
  for (const protocol of ['2026-07-28', 'legacy'] as const) {
    describe(protocol, () => {
      let h: Harness;
      beforeAll(async () => {
        h = await bridgeHarness({ name: 'studio', protocol, stdio: { command: process.execPath, args: [CONTENT] } });
      });
      afterAll(() => h?.bridge.close());

      it('passes image, document and text blocks on as sent, and structured content in the JSON as before', async () => {
        expect(h.bridge.protocolVersion).toMatch(protocol === 'legacy' ? /^2025-/ : /^2026-07-28$/);
        const result = await h.call('studio_chart', { month: '2026-11' });
        expect(result.successful).toBe(true);
        const direct = await directCall(
          [CONTENT],
          'chart',
          { month: '2026-11' },
          protocol === 'legacy' ? undefined : protocol,
        );
        expect((result as InvokeSuccess<string>).content).toEqual(withoutMetadata(direct.content));
        expect(result.value).toMatchObject({
          structuredContent: { month: '2026-11', total: 1234 },
          sessionId: 's-1',
          conversationId: 'c-1',
        });
        expect((result.value?.content as unknown[])[2]).toEqual({
          type: 'resource',
          uri: 'file:///sales/2026-11.csv',
          mimeType: 'text/csv',
          text: 'day,total\n1,1234\n',
        });
      });

      it('passes audio and binary documents on', async () => {
        const chime = await h.call('studio_chime', {});
        const [audio] = (chime as InvokeSuccess<string>).content!;
        expect(audio).toMatchObject({ type: 'audio', mimeType: 'audio/wav' });
        expect(
          Buffer.from((audio as { data: string }).data, 'base64')
            .subarray(0, 4)
            .toString(),
        ).toBe('RIFF');
        expect(chime.value?.content).toEqual([{ type: 'audio', mimeType: 'audio/wav', bytes: 52 }]);
        const archive = await h.call('studio_archive', {});
        expect((archive as InvokeSuccess<string>).content).toEqual([
          {
            type: 'resource',
            resource: { uri: 'file:///reports/report.bin', mimeType: 'application/octet-stream', blob: 'AAEC+v8=' },
          },
        ]);
      });
    });
  }
});

describe('content a hostile or broken server sends (a server written without an SDK)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await bridgeHarness({ name: 'raw', stdio: { command: process.execPath, args: [RAW_CONTENT] } });
  });
  afterAll(() => h?.bridge.close());

  const refusedMessage = (result: { errors: readonly { code?: string; message: string }[] }) => {
    expect(result.errors[0]?.code).toBe(BridgeErrorCode.REMOTE_MALFORMED_RESULT);
    return result.errors[0]!.message;
  };

  it('answers bad base64 with a failed result naming the remote tool and the block, and keeps serving', async () => {
    const message = refusedMessage(await h.call('raw_bad_base64', {}));
    expect(message).toBe(
      'raw_bad_base64: MCP server "raw" answered "bad-base64" with a result that is not a valid MCP tool result: content[1].data: Invalid Base64 string. ' +
        'The call reached the server and the tool ran there; nothing of its answer was sent. The server needs fixing; calling again will likely get the same answer.',
    );
    expect((await h.call('raw_blocks', { content: [{ type: 'text', text: 'still here' }] })).successful).toBe(true);
  });

  it('refuses base64 the SDK lets through but callers may not decode as sent (unpadded, with spaces or line breaks)', async () => {
    for (const data of ['AAA', 'AA AA', 'AA\nAA']) {
      const message = refusedMessage(
        await h.call('raw_blocks', { content: [{ type: 'image', data, mimeType: 'image/png' }] }),
      );
      expect(message).toContain(
        `raw_blocks: MCP server "raw" answered "blocks" with content that cannot be passed on: content block 0 ("image") has 'data' that is not valid base64`,
      );
      expect(message).toContain('the tool ran there; nothing of its answer was sent');
    }
  });

  it('refuses an image that is not image/*, audio without a media type, a document without a URI scheme, and too many blocks', async () => {
    const cases: Array<[unknown[], string]> = [
      [
        [{ type: 'image', data: 'AAAA', mimeType: 'text/html' }],
        'has mimeType "text/html", but an image block needs an image/* type',
      ],
      [[{ type: 'audio', data: 'AAAA', mimeType: 'nonsense' }], 'which is not a media type of the form type/subtype'],
      [
        [{ type: 'resource', resource: { uri: 'report.csv', text: 'a,b' } }],
        "needs 'resource.uri' as an absolute URI with a scheme",
      ],
      [
        Array.from({ length: 300 }, () => ({ type: 'image', data: 'AAAA', mimeType: 'image/png' })),
        'content has 300 blocks; at most 256 are allowed',
      ],
    ];
    for (const [content, problem] of cases)
      expect(refusedMessage(await h.call('raw_blocks', { content }))).toContain(problem);
  });

  it("refuses a block type MCP does not define, saying which block, without the SDK's validation dump", async () => {
    const message = refusedMessage(
      await h.call('raw_blocks', {
        content: [
          { type: 'text', text: 'ok' },
          { type: 'hologram', data: 'x' },
        ],
      }),
    );
    expect(message).toContain(
      'answered "blocks" with a result that is not a valid MCP tool result: content[1] is not a content block MCP defines (text, image, audio, resource, resource_link), or misses one of its fields.',
    );
    expect(message).not.toContain('"code"');
  });

  it('answers an image over the size bound with RESULT_TOO_LARGE, and one under it in full', async () => {
    const huge = await h.call('raw_huge_image', { chars: 4_000_000 });
    expect(huge.errors[0]).toEqual({
      code: ExecutionErrorCode.RESULT_TOO_LARGE,
      message: expect.stringContaining(
        "raw_huge_image returned a result larger than this host's limit of 1048576 bytes (its text and content blocks together)",
      ),
    });
    const fits = await h.call('raw_huge_image', { chars: 600_000 });
    expect(fits.successful).toBe(true);
    expect(((fits as InvokeSuccess<string>).content![0] as { data: string }).data).toHaveLength(600_000);
    expect(fits.value?.content).toEqual([{ type: 'image', mimeType: 'image/png', bytes: 450_000 }]);
  });

  it('drops fields of blocks the contract does not carry (annotations, _meta) and passes the block', async () => {
    const result = await h.call('raw_blocks', {
      content: [
        { type: 'image', data: 'AAAA', mimeType: 'image/png', annotations: { priority: 1 }, _meta: { trace: 'x' } },
      ],
    });
    expect((result as InvokeSuccess<string>).content).toEqual([{ type: 'image', data: 'AAAA', mimeType: 'image/png' }]);
  });

  it('passes structured content on in the JSON beside an image, as for text results', async () => {
    const result = await h.call('raw_pixel_with_structure', {});
    expect(result.value).toMatchObject({
      structuredContent: { width: 1, height: 1 },
      content: [
        { type: 'image', mimeType: 'image/png', bytes: 70 },
        { type: 'text', text: '{"width":1,"height":1}' },
      ],
    });
  });
});
