import { Content, functionToolSchema, InvokeResult, TypedAgentTool, type ToolDependencies } from '@aptix/tool-contract';
import { Agent, run } from '@openai/agents';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { createAgentsTools } from '../src/index.js';
import { call, say, ScriptedModel } from './scripted-model.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const NoArgs = Type.Object({}, { additionalProperties: false });

class ChartTool extends TypedAgentTool<typeof NoArgs> {
  static readonly ToolName = 'acme_chart';
  static readonly ToolUsageMetadata = 'acme_chart draws the sales chart.';
  static getSchema() {
    return functionToolSchema(ChartTool.ToolName, 'Draws the sales chart.', NoArgs);
  }
  constructor({ logger }: ToolDependencies) {
    super(NoArgs, logger);
  }
  protected run() {
    return InvokeResult.withContent([Content.text('Sales:'), Content.image(PNG, 'image/png'), Content.resource('file:///q3.pdf', { blob: Buffer.from('%PDF') }, 'application/pdf')], { months: 3 });
  }
}

describe('@aptix/openai-agents: a result with content blocks', () => {
  it('reaches the model as the SDK’s structured tool output (text, image, file), with the tool’s JSON value first', async () => {
    const { tools } = await createAgentsTools({ tools: [{ tools: [ChartTool] }] });
    let readBack: unknown;
    const model = new ScriptedModel([
      () => [call('acme_chart', {})],
      (request) => {
        readBack = (request.input as Array<{ type: string; output?: unknown }>).filter((item) => item.type === 'function_call_result').at(-1)?.output;
        return [say('Sales rose.')];
      },
    ]);
    const result = await run(new Agent({ name: 'charts', instructions: 'Be brief.', tools, model }), 'Show the sales chart.');
    expect(result.finalOutput).toBe('Sales rose.');
    expect(readBack).toEqual([
      { type: 'input_text', text: '{"months":3}' },
      { type: 'input_text', text: 'Sales:' },
      expect.objectContaining({ type: 'input_image', image: `data:image/png;base64,${PNG}` }),
      expect.objectContaining({ type: 'input_file', file: expect.stringContaining(`data:application/pdf;base64,${Buffer.from('%PDF').toString('base64')}`), filename: 'q3.pdf' }),
    ]);
  });
});
