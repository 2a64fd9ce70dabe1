/**
 * A tool result with content blocks fed back to the model through the Responses API: the
 * function_call_output carries input_text / input_image / input_file items, kept in the stored
 * conversation, and sent again on the next turn of a stateless (store: false) conversation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Content, functionToolSchema, InvokeResult, TypedAgentTool, type ToolDependencies } from '@aptix/tool-contract';
import { Type, type Static } from 'typebox';
import { call, respond } from '../src/testing/index.js';
import { createHarness, testModes, type Harness } from './support/harness.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const Args = Type.Object(
  {
    what: Type.Union([Type.Literal('chart'), Type.Literal('report'), Type.Literal('sound')], {
      description: 'What to draw.',
    }),
  },
  { additionalProperties: false },
);

class ChartTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'test_chart';
  static readonly ToolUsageMetadata = 'test_chart draws a chart, a report or a sound.';
  static getSchema() {
    return functionToolSchema(ChartTool.ToolName, 'Draws a chart.', Args);
  }
  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }
  protected run({ what }: Static<typeof Args>) {
    if (what === 'chart')
      return InvokeResult.withContent([Content.text('Sales by month:'), Content.image(PNG, 'image/png')]);
    if (what === 'sound') return InvokeResult.withContent([Content.audio(Buffer.from('RIFF0000WAVE'), 'audio/wav')]);
    return InvokeResult.withContent(
      [
        Content.resource('file:///reports/q3.pdf', { blob: Buffer.from('%PDF-1.4') }, 'application/pdf'),
        Content.resource('test://notes', { text: 'Up 4%.' }, 'text/plain'),
      ],
      { pages: 1 },
    );
  }
}

let h: Harness;
afterEach(async () => {
  await h?.close();
});

async function harness(reasoner: { deferred?: boolean } = {}) {
  const modes = testModes().map((mode) =>
    mode.key === 'general' ? { ...mode, tools: [...mode.tools, 'test_chart'] } : mode,
  );
  h = await createHarness({ extraTools: [ChartTool], modes, reasoner });
  return h;
}

describe('content blocks in the agent loop (Responses API)', () => {
  it('gives a result called through aptix_call_tool in a deferred mode the same content items as a direct call', async () => {
    await harness({ deferred: true });
    const session = await h.store.createSession({});
    h.server.script(
      respond(undefined, call('c1', 'aptix_call_tool', { name: 'test_chart', arguments: { what: 'chart' } })),
      respond('Sales rose.'),
    );
    await h.reasoner.runTurn(session.id, 'Show me the sales chart.');
    expect(h.server.requests[0]!.body.tools.map((tool) => tool.name)).not.toContain('test_chart');
    expect(h.server.requests[1]!.body.input[2]).toEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: [
        { type: 'input_text', text: 'Sales by month:' },
        { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
      ],
    });
  });

  it('feeds an image result back as a function_call_output whose output is input_text and input_image items, and sends it again on the next turn', async () => {
    await harness();
    const session = await h.store.createSession({});
    h.server.script(
      respond(undefined, call('c1', 'test_chart', { what: 'chart' })),
      respond('Sales rose.'),
      respond('Yes.'),
    );
    const result = await h.reasoner.runTurn(session.id, 'Show me the sales chart.');
    expect(result.output).toBe('Sales rose.');
    const expected = {
      type: 'function_call_output',
      call_id: 'c1',
      output: [
        { type: 'input_text', text: 'Sales by month:' },
        { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
      ],
    };
    expect(h.server.requests[1]!.body.input[2]).toEqual(expected);
    // The stored conversation keeps the items: the next turn (store: false) sends them again.
    await h.reasoner.runTurn(session.id, 'Did they?');
    expect(h.server.requests[2]!.body.input[2]).toEqual(expected);
    // The event stream and the turn's record carry the text view (Chat Completions' view): no base64 in it.
    expect(JSON.parse(result.toolCalls[0]!.output ?? '{}')).toEqual({
      content: [
        { type: 'text', text: 'Sales by month:' },
        { type: 'image', mimeType: 'image/png', bytes: 70 },
      ],
    });
  });

  it("sends a binary document as input_file, a text document as input_text, and the tool's own JSON value first", async () => {
    await harness();
    const session = await h.store.createSession({});
    h.server.script(respond(undefined, call('c1', 'test_chart', { what: 'report' })), respond('Done.'));
    await h.reasoner.runTurn(session.id, 'The Q3 report, please.');
    expect(h.server.requests[1]!.body.input[2]!.output).toEqual([
      { type: 'input_text', text: '{"pages":1}' },
      {
        type: 'input_file',
        filename: 'q3.pdf',
        file_data: `data:application/pdf;base64,${Buffer.from('%PDF-1.4').toString('base64')}`,
      },
      { type: 'input_text', text: 'Document test://notes (text/plain):\nUp 4%.' },
    ]);
  });

  it('says audio was left out, since a function call output has no audio item', async () => {
    await harness();
    const session = await h.store.createSession({});
    h.server.script(respond(undefined, call('c1', 'test_chart', { what: 'sound' })), respond('Done.'));
    await h.reasoner.runTurn(session.id, 'Play it.');
    const [item] = h.server.requests[1]!.body.input[2]!.output as Array<{ type: string; text: string }>;
    expect(item!.type).toBe('input_text');
    expect(item!.text).toMatch(/returned audio \(audio\/wav, 12 bytes.*cannot carry to the model; it was left out/);
  });
});
