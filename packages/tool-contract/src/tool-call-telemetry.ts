import type { Attributes, Histogram, ObservableResult, Span } from '@opentelemetry/api';
import type { AgentToolExecutionContext } from './agent-tool.js';
import type { InvokeResult } from './invoke-result.js';
import {
  inSpan,
  meterInstruments,
  scopeTracer,
  SpanKind,
  SpanStatusCode,
  tracingEnabled,
  truncatedForSpan,
} from './telemetry.js';

const SCOPE = '@aptix/tool-contract';
const tracer = scopeTracer(SCOPE);

/** Bucket bounds of the call-duration histogram, in seconds: the conventions' advice for GenAI operation durations. */
export const DURATION_BUCKETS_S = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;

/** A tool's calls in flight, and the attributes its metric points carry, made once. */
interface ToolSeries {
  inFlight: number;
  readonly tool: Attributes;
  readonly ok: Attributes;
  readonly failed: Map<string, Attributes>;
}

/** Distinct tool names given their own series; calls of names past it share `_OTHER` (names come from callers). */
const MAX_SERIES = 1000;
const series = new Map<string, ToolSeries>();

function seriesOf(name: string): ToolSeries {
  let found = series.get(name);
  if (found === undefined) {
    const key = series.size < MAX_SERIES ? name : '_OTHER';
    found = series.get(key) ?? {
      inFlight: 0,
      tool: { 'gen_ai.tool.name': key },
      ok: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': key },
      failed: new Map(),
    };
    series.set(key, found);
  }
  return found;
}

function failedAttributes(tool: ToolSeries, code: string): Attributes {
  let attributes = tool.failed.get(code);
  if (attributes === undefined) {
    attributes = { ...tool.ok, 'error.type': code };
    if (tool.failed.size < 64) tool.failed.set(code, attributes);
  }
  return attributes;
}

const instruments = meterInstruments(SCOPE, (meter) => {
  // Calls in flight are counted in memory and read when metrics are collected: a synchronous
  // up-down counter would cost every call two more records (each hashes its attributes once per reader).
  meter
    .createObservableUpDownCounter('aptix.tool.calls.active', {
      description: 'Tool calls the executor is running now, by tool.',
      unit: '{call}',
    })
    .addCallback((result: ObservableResult) => {
      for (const tool of series.values()) result.observe(tool.inFlight, tool.tool);
    });
  return {
    duration: meter.createHistogram('aptix.tool.call.duration', {
      description:
        'Duration of tool calls run by the executor, by tool (gen_ai.tool.name) and outcome (error.type on failure).',
      unit: 's',
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS_S] },
    }) as Histogram,
  };
});

/** True when a call should be observed: an SDK records spans or metrics. Two global reads when both are off. */
export function toolCallObserved(): boolean {
  return tracingEnabled() || instruments() !== undefined;
}

/** What a call's span and metrics say about it, beside its name. */
export interface ObservedCall {
  readonly name: string;
  readonly args: unknown;
  readonly context: AgentToolExecutionContext;
  /** The model's id for this call (`gen_ai.tool.call.id`), when the caller knows it. */
  readonly callId: string | undefined;
  /** Record the arguments and the result on the span, cut to this many characters; 0 never records them. */
  readonly recordContentChars: number;
}

/**
 * Runs one call in an `execute_tool <name>` span (GenAI semantic conventions) and records its duration
 * and the calls in flight. Called only when {@link toolCallObserved}; `run` never rejects (the executor's
 * promise).
 */
export function observeToolCall(
  call: ObservedCall,
  run: () => Promise<InvokeResult<string>>,
): Promise<InvokeResult<string>> {
  const metrics = instruments();
  const tool = metrics === undefined ? undefined : seriesOf(call.name);
  const started = performance.now();
  if (tool !== undefined) tool.inFlight++;
  const measured = (result: InvokeResult<string>): void => {
    if (metrics === undefined || tool === undefined) return;
    tool.inFlight--;
    const code = outcomeCode(result);
    metrics.duration.record(
      (performance.now() - started) / 1000,
      code === undefined ? tool.ok : failedAttributes(tool, code),
    );
  };
  if (!tracingEnabled()) {
    return run().then((result) => {
      measured(result);
      return result;
    });
  }
  return inSpan(
    tracer,
    `execute_tool ${call.name}`,
    { kind: SpanKind.INTERNAL, attributes: spanAttributes(call) },
    run,
    (span, result) => {
      describeResult(span, result, call.recordContentChars);
      measured(result);
    },
  );
}

function spanAttributes(call: ObservedCall): Attributes {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': call.name,
    'gen_ai.tool.type': 'function',
  };
  if (call.callId !== undefined) attributes['gen_ai.tool.call.id'] = call.callId;
  if (call.context.conversationId !== undefined) attributes['gen_ai.conversation.id'] = call.context.conversationId;
  if (call.context.sessionId !== undefined) attributes['aptix.session.id'] = call.context.sessionId;
  if (call.context.mode !== undefined) attributes['aptix.mode'] = call.context.mode;
  if (call.recordContentChars > 0) {
    const text = typeof call.args === 'string' ? call.args : safeJson(call.args);
    if (text !== undefined) attributes['gen_ai.tool.call.arguments'] = truncatedForSpan(text, call.recordContentChars);
  }
  return attributes;
}

function describeResult(span: Span, result: InvokeResult<string>, recordChars: number): void {
  const code = outcomeCode(result);
  if (code !== undefined) {
    span.setAttribute('error.type', code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: result.errors[0]?.message ?? code });
  }
  if (recordChars > 0 && result.successful && typeof result.result === 'string')
    span.setAttribute('gen_ai.tool.call.result', truncatedForSpan(result.result, recordChars));
}

/** The outcome code of a failed result (`_OTHER` when it carries none); undefined for a success. */
function outcomeCode(result: InvokeResult<string>): string | undefined {
  return result.successful ? undefined : (result.errors[0]?.code ?? '_OTHER');
}

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
