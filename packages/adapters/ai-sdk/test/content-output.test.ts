import { CHART_PDF, contentToolPackage, RED_PIXEL_PNG } from '@aptix/adapter-core/testing';
import * as samples from '@aptix/tool-samples';
import { generateText, stepCountIs } from 'ai';
import { describe, expect, it } from 'vitest';
import { createAiSdkTools } from '../src/index.js';
import { call, lastToolOutput, scriptedModel, text } from './scripted-model.js';

describe('@aptix/ai-sdk: a result with content blocks', () => {
  it("reaches the model as the AI SDK's content output (text and files), while the application's output stays the JSON value", async () => {
    const { tools } = await createAiSdkTools({ tools: [contentToolPackage, samples] });
    let readBack: unknown;
    let plain: unknown;
    const { model } = scriptedModel([
      () => [call('acme_chart', {})],
      (options) => {
        readBack = lastToolOutput(options);
        return [call('testing_calculator', { operation: 'add', a: 1, b: 2 })];
      },
      (options) => {
        plain = lastToolOutput(options);
        return [text('Sales rose.')];
      },
    ]);
    const result = await generateText({ model, tools, stopWhen: stepCountIs(4), prompt: 'Show the sales chart.' });
    expect(result.text).toBe('Sales rose.');
    expect(readBack).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: '{"months":3}' },
        { type: 'text', text: 'Sales:' },
        { type: 'file', mediaType: 'image/png', data: { type: 'data', data: RED_PIXEL_PNG } },
        {
          type: 'file',
          mediaType: 'application/pdf',
          filename: 'q3.pdf',
          data: { type: 'data', data: CHART_PDF.toString('base64') },
        },
      ],
    });
    expect(result.steps[0]!.toolResults[0]!.output).toEqual({ months: 3 });
    // A result without content keeps its JSON output.
    expect(plain).toMatchObject({ type: 'json', value: { value: 3 } });
  });
});
