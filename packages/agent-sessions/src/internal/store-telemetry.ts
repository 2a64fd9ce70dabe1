import {
  context,
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Histogram,
  type MeterProvider,
} from '@opentelemetry/api';

// The session store's writes, seen through OpenTelemetry when an application (the Aptix host)
// registers an SDK: a client span per write and the `db.client.operation.duration` histogram of the
// database conventions, by store and operation. With no SDK, a write pays two reads of the API's globals.

const SCOPE = '@aptix/agent-sessions';
const tracer = trace.getTracer(SCOPE);
const noTracing = new ProxyTracerProvider().getDelegate();
const noopMeter = createNoopMeter().constructor;
let durationFor: MeterProvider | undefined;
let duration: Histogram | undefined;

function writeDuration(): Histogram | undefined {
  const provider = metrics.getMeterProvider();
  if (provider !== durationFor) {
    durationFor = provider;
    const meter = provider.getMeter(SCOPE);
    duration =
      meter.constructor === noopMeter
        ? undefined
        : meter.createHistogram('db.client.operation.duration', {
            description: 'Duration of the session store writes, by store (db.system.name) and operation.',
            unit: 's',
            advice: {
              explicitBucketBoundaries: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
            },
          });
  }
  return duration;
}

function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== noTracing;
}

/**
 * Runs one write of the store named by `location` (`SQLite database …`, `PostgreSQL schema …`) as the
 * operation `operation` (`create_session`, `append_conversation_items`…), observed when an SDK is registered.
 */
export function observedWrite<T>(location: string, operation: string, write: () => Promise<T>): Promise<T> {
  const histogram = writeDuration();
  const traced = tracing();
  if (histogram === undefined && !traced) return write();
  const system = location.startsWith('PostgreSQL') ? 'postgresql' : 'sqlite';
  const attributes = { 'db.system.name': system, 'db.operation.name': operation };
  const span = traced
    ? tracer.startSpan(`${operation} aptix_sessions`, { kind: SpanKind.CLIENT, attributes })
    : undefined;
  const started = performance.now();
  const settle = (error?: unknown) => {
    const type = error === undefined ? undefined : error instanceof Error ? error.name : '_OTHER';
    histogram?.record(
      (performance.now() - started) / 1000,
      type === undefined ? attributes : { ...attributes, 'error.type': type },
    );
    if (span === undefined) return;
    if (type !== undefined) {
      span.setAttribute('error.type', type);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };
  const run = span === undefined ? write : () => context.with(trace.setSpan(context.active(), span), write);
  return run().then(
    (value) => {
      settle();
      return value;
    },
    (error: unknown) => {
      settle(error);
      throw error;
    },
  );
}
