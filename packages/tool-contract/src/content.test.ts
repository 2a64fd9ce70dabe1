/**
 * Content beyond JSON text, through the real executor: what a tool returns with Content and
 * InvokeResult.withContent, and what the executor refuses (bad base64, odd media types, unknown block
 * types, extra fields, huge blocks) so no tool can put an invalid block on the wire.
 */
import { Type, type Static } from 'typebox';
import { describe, expect, it } from 'vitest';
import { CapturingAdminLogger } from './admin-logger.js';
import type { ToolDependencies } from './agent-tool.js';
import { Content, isBase64, MAX_CONTENT_BLOCKS, type ContentBlock } from './content.js';
import { ExecutionErrorCode } from './errors.js';
import { InvokeResult } from './invoke-result.js';
import { functionToolSchema, type FunctionToolSchema } from './schema.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool, type RunOutput } from './typed-agent-tool.js';

/** A 1×1 red PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);
const Args = Type.Object(
  { kind: Type.String({ description: 'Which answer to give.' }) },
  { additionalProperties: false },
);

/** Answers whatever the test put under `answers[kind]`. */
const answers = new Map<string, () => RunOutput>();
class ContentTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'test_content';
  static readonly ToolUsageMetadata = 'Returns content blocks.';
  static getSchema(): FunctionToolSchema {
    return functionToolSchema(ContentTool.ToolName, 'Returns content blocks.', Args);
  }
  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }
  protected run({ kind }: Static<typeof Args>) {
    return answers.get(kind)!();
  }
}

function setup(maxResultBytes?: number) {
  const registry = new AgentToolRegistry();
  registry.registerTool(ContentTool);
  const logger = new CapturingAdminLogger();
  const executor = new AgentToolExecutor({
    registry,
    logger,
    ...(maxResultBytes === undefined ? {} : { maxResultBytes }),
  });
  return {
    logger,
    call: (kind: string, answer: () => RunOutput) => (
      answers.set(kind, answer),
      executor.execute('test_content', { kind })
    ),
  };
}

describe('content blocks beyond JSON text', () => {
  it('sends an image, audio, an embedded document and text as the tool built them, with a JSON description as the text view', async () => {
    const { call } = setup();
    const blocks = [
      Content.text('A red pixel:'),
      Content.image(PNG, 'image/png'),
      Content.audio(new Uint8Array([82, 73, 70, 70]), 'audio/wav'),
      Content.resource('test://doc', { text: '{"a":1}' }, 'application/json'),
      Content.resource('file:///x.bin', { blob: new Uint8Array([1, 2, 3]) }),
    ];
    const result = await call('mixed', () => InvokeResult.withContent(blocks));
    expect(result).toEqual({ successful: true, result: expect.any(String), errors: [], content: blocks });
    expect(result.successful && result.content?.[1]).toEqual({
      type: 'image',
      data: PNG.toString('base64'),
      mimeType: 'image/png',
    });
    expect(JSON.parse(result.result!)).toEqual({
      content: [
        { type: 'text', text: 'A red pixel:' },
        { type: 'image', mimeType: 'image/png', bytes: PNG.length },
        { type: 'audio', mimeType: 'audio/wav', bytes: 4 },
        { type: 'resource', uri: 'test://doc', mimeType: 'application/json', text: '{"a":1}' },
        { type: 'resource', uri: 'file:///x.bin', bytes: 3 },
      ],
    });
  });

  it("keeps the tool's own JSON value as the text view when it gives one", async () => {
    const { call } = setup();
    const result = await call('valued', () =>
      InvokeResult.withContent([Content.image(PNG, 'image/png')], { width: 1, height: 1 }),
    );
    expect(result.successful && JSON.parse(result.result)).toEqual({ width: 1, height: 1 });
  });

  it('leaves plain JSON results without content', async () => {
    const { call } = setup();
    expect(await call('plain', () => ({ ok: true }))).toEqual({ successful: true, result: '{"ok":true}', errors: [] });
  });

  const malformed: Array<[string, unknown, RegExp]> = [
    [
      'bad base64',
      [{ type: 'image', data: 'not base64!', mimeType: 'image/png' }],
      /content block 0 \("image"\) has 'data' that is not valid base64/,
    ],
    ['base64 without padding', [{ type: 'image', data: 'YWJjZA', mimeType: 'image/png' }], /not valid base64/],
    ['empty data', [{ type: 'audio', data: '', mimeType: 'audio/wav' }], /not valid base64/],
    [
      'data as bytes',
      [{ type: 'image', data: [1, 2], mimeType: 'image/png' }],
      /needs 'data' as a base64 string, got an array/,
    ],
    [
      'an unknown block type',
      [{ type: 'video', data: 'AAAA', mimeType: 'video/mp4' }],
      /content block 0 \("video"\) has an unknown type; a block's type is one of text, image, audio, resource/,
    ],
    ['a prototype name as type', [{ type: '__proto__' }], /has an unknown type/],
    [
      'an image with an audio media type',
      [{ type: 'image', data: 'AAAA', mimeType: 'audio/wav' }],
      /an image block needs an image\/\* type/,
    ],
    [
      'a media type with a newline',
      [{ type: 'image', data: 'AAAA', mimeType: 'image/png\r\nX-Evil: 1' }],
      /not a media type/,
    ],
    [
      'an extra field',
      [{ type: 'text', text: 'hi', html: '<b>' }],
      /has a field 'html' that a text block does not have/,
    ],
    [
      'a resource without a scheme',
      [{ type: 'resource', resource: { uri: 'report.csv', text: 'a,b' } }],
      /absolute URI with a scheme/,
    ],
    [
      'a resource with text and blob',
      [{ type: 'resource', resource: { uri: 'test://x', text: 'a', blob: 'AAAA' } }],
      /exactly one of 'resource.text'/,
    ],
    ['a null block', [Content.text('ok'), null], /content block 1 is null/],
    ['content that is not an array', { type: 'text', text: 'x' }, /content must be an array of blocks, got object/],
    ['an empty array', [], /content is an empty array/],
    [
      'too many blocks',
      Array.from({ length: MAX_CONTENT_BLOCKS + 1 }, () => Content.text('x')),
      /at most 256 are allowed/,
    ],
  ];
  for (const [what, content, message] of malformed) {
    it(`refuses ${what} as MALFORMED_RESULT, naming the block and the rule, and sends nothing of it`, async () => {
      const { call, logger } = setup();
      const result = await call(
        what,
        () => ({ successful: true, result: '{}', errors: [], content }) as unknown as RunOutput,
      );
      expect(result).toEqual({
        successful: false,
        result: null,
        errors: [{ message: expect.stringMatching(message), code: ExecutionErrorCode.MALFORMED_RESULT }],
      });
      expect(result).not.toHaveProperty('content');
      expect(result.errors[0]!.message).not.toMatch(/[\r\n]/); // a value the tool gave is quoted, never raw
      expect(
        logger.entries.some(
          (entry) => entry.level === 'error' && entry.tag === '[test_content_ExecuteAsync__MalformedResult]',
        ),
      ).toBe(true);
    });
  }

  it('refuses a result whose text and blocks together pass the size bound, though each part alone fits (RESULT_TOO_LARGE)', async () => {
    const { call } = setup(64 * 1024);
    const half = Buffer.alloc(24 * 1024, 7); // 32 KiB of base64
    const result = await call('huge', () =>
      InvokeResult.withContent([Content.image(half, 'image/png'), Content.image(half, 'image/png')]),
    );
    expect(result.successful).toBe(false);
    expect(result.errors[0]).toEqual({
      message: expect.stringContaining('its text and content blocks together'),
      code: ExecutionErrorCode.RESULT_TOO_LARGE,
    });
    const fits = await call('fits', () => InvokeResult.withContent([Content.image(half, 'image/png')]));
    expect(fits.successful).toBe(true);
  });

  it('refuses one block of many megabytes by its length, before scanning its data (so not-base64 is not even found)', async () => {
    const { call } = setup();
    const big = '!'.repeat(8 * 1024 * 1024);
    const result = await call('one huge', () =>
      InvokeResult.withContent([{ type: 'image', data: big, mimeType: 'image/png' } satisfies ContentBlock]),
    );
    expect(result.errors[0]?.code).toBe(ExecutionErrorCode.RESULT_TOO_LARGE);
  });

  it('sends copies of the blocks, so getters and extra prototypes of what the tool returned never reach the wire', async () => {
    const { call } = setup();
    const block = Object.create(
      { inherited: 'x' },
      { type: { value: 'text', enumerable: true }, text: { value: 'hi', enumerable: true } },
    ) as ContentBlock;
    const result = await call('prototype', () => InvokeResult.withContent([block]));
    expect(result.successful && Object.getPrototypeOf(result.content![0])).toBe(Object.prototype);
    expect(result.successful && result.content).toEqual([{ type: 'text', text: 'hi' }]);
  });

  it('recognises standard padded base64 only', () => {
    expect(isBase64(PNG.toString('base64'))).toBe(true);
    expect(isBase64('YWI=')).toBe(true);
    expect(isBase64('YQ==')).toBe(true);
    expect(isBase64('YQ=A')).toBe(false);
    expect(isBase64('Y===')).toBe(false);
    expect(isBase64('YWI-')).toBe(false); // the URL-safe alphabet
    expect(isBase64('YW I=')).toBe(false);
  });
});
