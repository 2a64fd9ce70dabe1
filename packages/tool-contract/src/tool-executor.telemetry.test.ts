import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  MeterProvider,
  MetricReader,
  type HistogramMetricData,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Type, type Static } from 'typebox';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentToolExecutionContext, ToolDependencies } from './agent-tool.js';
import { functionToolSchema } from './schema.js';
import { tracingEnabled } from './telemetry.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool } from './typed-agent-tool.js';

// The executor's spans and metrics, through a real OpenTelemetry SDK registered globally, as a host
// registers one: an in-memory span exporter, and a metric reader collected on demand.

const Args = Type.Object(
  { text: Type.String({ minLength: 1, description: 'Text.' }) },
  { additionalProperties: false },
);
const inner = trace.getTracer('test-tool');

class EchoTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'test_echo';
  static readonly ToolUsageMetadata = 'Echoes its text.';
  static getSchema() {
    return functionToolSchema(EchoTool.ToolName, 'Echoes its text.', Args);
  }
  constructor(deps: ToolDependencies) {
    super(Args, deps.logger);
  }
  protected async run({ text }: Static<typeof Args>, _context: AgentToolExecutionContext) {
    // A span the tool makes (as the MCP bridge does for its remote call) is the call span's child.
    inner.startSpan('inside the tool').end();
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (text === 'boom') throw new Error('broken');
    return { text };
  }
}

class Reader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function executor(recordContentChars?: number): AgentToolExecutor {
  const registry = new AgentToolRegistry();
  registry.registerTool(EchoTool);
  return new AgentToolExecutor({ registry, ...(recordContentChars === undefined ? {} : { recordContentChars }) });
}

async function metric(reader: Reader, name: string): Promise<MetricData | undefined> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name);
}

describe('AgentToolExecutor without an OpenTelemetry SDK', () => {
  it('runs calls and reports tracing off', async () => {
    expect(tracingEnabled()).toBe(false);
    const result = await executor().execute('test_echo', '{"text":"hi"}');
    expect(result).toEqual({ successful: true, result: '{"text":"hi"}', errors: [] });
  });
});

describe('AgentToolExecutor with an OpenTelemetry SDK registered', () => {
  const spans = new InMemorySpanExporter();
  const reader = new Reader();
  const contextManager = new AsyncLocalStorageContextManager().enable();
  beforeAll(() => {
    context.setGlobalContextManager(contextManager);
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  });
  afterEach(() => spans.reset());
  afterAll(() => {
    trace.disable();
    metrics.disable();
    context.disable();
  });

  it("wraps a call in an execute_tool span with the GenAI attributes, the tool's own spans inside it", async () => {
    expect(tracingEnabled()).toBe(true);
    const result = await executor().execute(
      'test_echo',
      '{"text":"secret"}',
      { sessionId: 's-1', conversationId: 'c-1', mode: 'tool_diagnostics' },
      { callId: 'call_42' },
    );
    expect(result.successful).toBe(true);
    const [child, call] = spans.getFinishedSpans();
    expect(call!.name).toBe('execute_tool test_echo');
    expect(call!.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'test_echo',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.call.id': 'call_42',
      'gen_ai.conversation.id': 'c-1',
      'aptix.session.id': 's-1',
      'aptix.mode': 'tool_diagnostics',
    });
    expect(child!.name).toBe('inside the tool');
    expect(child!.parentSpanContext?.spanId).toBe(call!.spanContext().spanId);
    expect(child!.spanContext().traceId).toBe(call!.spanContext().traceId);
  });

  it('marks a failed call with its outcome code as error.type, and never records arguments unless asked', async () => {
    const exec = executor();
    await exec.execute('test_echo', '{"text":""}');
    await exec.execute('test_echo', '{"text":"boom"}');
    const [invalid, , thrown] = spans.getFinishedSpans();
    expect(invalid!.attributes['error.type']).toBe('INVALID_ARGUMENTS');
    expect(invalid!.status.code).toBe(2);
    expect(thrown!.attributes['error.type']).toBe('TOOL_EXCEPTION');
    for (const span of spans.getFinishedSpans()) {
      expect(span.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
      expect(span.attributes['gen_ai.tool.call.result']).toBeUndefined();
    }
  });

  it('records the arguments and the result, cut to the setting, when a setting asks for them', async () => {
    await executor(8).execute('test_echo', { text: 'a long text that will be cut' });
    const call = spans.getFinishedSpans().find((span) => span.name === 'execute_tool test_echo')!;
    expect(call.attributes['gen_ai.tool.call.arguments']).toBe('{"text":… (31 more characters)');
    expect(call.attributes['gen_ai.tool.call.result']).toBe('{"text":… (31 more characters)');
  });

  it('records each call in the duration histogram by tool and outcome, and none stays in flight', async () => {
    const exec = executor();
    await exec.execute('test_echo', '{"text":"one"}');
    await exec.execute('test_echo', '{"text":"two"}');
    await exec.execute('test_echo', '{"text":""}');
    const duration = (await metric(reader, 'aptix.tool.call.duration')) as HistogramMetricData;
    expect(duration.descriptor.unit).toBe('s');
    const byOutcome = new Map(
      duration.dataPoints.map((point) => [String(point.attributes['error.type'] ?? 'ok'), point.value.count]),
    );
    // Earlier tests in this suite called the same tool: read the counts as at least those of this test.
    expect(byOutcome.get('ok')).toBeGreaterThanOrEqual(2);
    expect(byOutcome.get('INVALID_ARGUMENTS')).toBeGreaterThanOrEqual(1);
    expect(duration.dataPoints.every((point) => point.attributes['gen_ai.tool.name'] === 'test_echo')).toBe(true);
    const active = await metric(reader, 'aptix.tool.calls.active');
    expect(active!.dataPoints.map((point) => point.value)).toEqual([0]);
    // Read while two calls wait in the tool: both count, then neither.
    const running = [exec.execute('test_echo', '{"text":"a"}'), exec.execute('test_echo', '{"text":"b"}')];
    const during = await metric(reader, 'aptix.tool.calls.active');
    await Promise.all(running);
    expect(during!.dataPoints.map((point) => point.value)).toEqual([2]);
    const after = await metric(reader, 'aptix.tool.calls.active');
    expect(after!.dataPoints.map((point) => [point.value, point.attributes])).toEqual([
      [0, { 'gen_ai.tool.name': 'test_echo' }],
    ]);
  });
});
