import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, respond } from '../src/testing/index.js';
import { createHarness, type Harness } from './support/harness.js';

// The agent loop under a registered OpenTelemetry SDK (the GenAI conventions): an invoke_agent span per
// turn, a chat span per model call with the model and the token usage the endpoint reports, the tool
// call's execute_tool span with the model's call id, and the trace context sent to the model endpoint.

const spans = new InMemorySpanExporter();
let h: Harness;
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
});
afterAll(() => {
  trace.disable();
  propagation.disable();
  context.disable();
});
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  spans.reset();
  await h.close();
});

describe('a traced turn', () => {
  it('nests chat and execute_tool spans in invoke_agent, with model, usage and call id, and sends traceparent to the model', async () => {
    const session = await h.store.createSession({});
    h.server.script(
      respond(undefined, call('call_7', 'testing_calculator', { operation: 'add', a: 2, b: 3 })),
      respond('5'),
    );
    const result = await h.reasoner.runTurn(session.id, 'What is 2 + 3?');
    expect(result.status).toBe('completed');

    const finished = spans.getFinishedSpans();
    const agent = finished.find((span) => span.name === 'invoke_agent aptix')!;
    expect(agent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': session.id,
    });
    const chats = finished.filter((span) => span.name === `chat ${h.reasoner.model}`);
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.parentSpanContext?.spanId).toBe(agent.spanContext().spanId);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': h.reasoner.model,
        'gen_ai.response.model': h.reasoner.model,
        'gen_ai.usage.input_tokens': 10,
        'gen_ai.usage.output_tokens': 5,
      });
    }
    const tool = finished.find((span) => span.name === 'execute_tool testing_calculator')!;
    expect(tool.attributes['gen_ai.tool.call.id']).toBe('call_7');
    expect(tool.parentSpanContext?.spanId).toBe(agent.spanContext().spanId);

    // Each request to the model carried its chat span's context.
    const sent = h.server.requests.map((request) => request.headers.traceparent);
    expect(sent).toEqual(chats.map((chat) => `00-${chat.spanContext().traceId}-${chat.spanContext().spanId}-01`));
  });
});
