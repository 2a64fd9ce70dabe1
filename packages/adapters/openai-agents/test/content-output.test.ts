import { CHART_PDF, contentToolPackage, RED_PIXEL_PNG } from '@aptix/adapter-core/testing';
import { Agent, run } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { createAgentsTools } from '../src/index.js';
import { call, say, ScriptedModel } from './scripted-model.js';

describe('@aptix/openai-agents: a result with content blocks', () => {
  it('reaches the model as the SDK’s structured tool output (text, image, file), with the tool’s JSON value first', async () => {
    const { tools } = await createAgentsTools({ tools: [contentToolPackage] });
    let readBack: unknown;
    const model = new ScriptedModel([
      () => [call('acme_chart', {})],
      (request) => {
        readBack = (request.input as Array<{ type: string; output?: unknown }>)
          .filter((item) => item.type === 'function_call_result')
          .at(-1)?.output;
        return [say('Sales rose.')];
      },
    ]);
    const result = await run(
      new Agent({ name: 'charts', instructions: 'Be brief.', tools, model }),
      'Show the sales chart.',
    );
    expect(result.finalOutput).toBe('Sales rose.');
    expect(readBack).toEqual([
      { type: 'input_text', text: '{"months":3}' },
      { type: 'input_text', text: 'Sales:' },
      expect.objectContaining({ type: 'input_image', image: `data:image/png;base64,${RED_PIXEL_PNG}` }),
      expect.objectContaining({
        type: 'input_file',
        file: expect.stringContaining(`data:application/pdf;base64,${CHART_PDF.toString('base64')}`),
        filename: 'q3.pdf',
      }),
    ]);
  });
});
