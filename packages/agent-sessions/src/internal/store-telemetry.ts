import {
  context,
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Histogram,
  type MeterProvider,
} from '@opentelemetry/api';

// The session store's writes (sessions, approvals, MCP tasks, the audit trail), seen through
// OpenTelemetry when an application (the Aptix host) registers an SDK: a client span per write and the
// `db.client.operation.duration` histogram of the database conventions, by store and operation. With no
// SDK, a write pays two reads of the API's globals.

const SCOPE = '@aptix/agent-sessions';
const tracer = trace.getTracer(SCOPE);
const noTracing = new ProxyTracerProvider().getDelegate();
const noopMeter = createNoopMeter().constructor;
let durationFor: MeterProvider | undefined;
let duration: Histogram | undefined;

/** The store a write goes to (`db.system.name`). */
export type StoreSystem = 'sqlite' | 'postgresql';

/**
 * Which writes get a span: `always`, or `nested`: only inside a span already running (a request's).
 * Housekeeping that runs on a timer (the approval sweep, task heartbeats, the audit trail's batches)
 * is `nested`, so an idle host does not send a root span every few seconds; its durations are still
 * recorded in the histogram.
 */
export type WriteSpans = 'always' | 'nested' | 'never';

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

/** The attributes of each (store, operation), made once: a write allocates none. */
const attributesOf = new Map<string, { readonly ok: Attributes; readonly failed: Map<string, Attributes> }>();

function attributes(system: StoreSystem, operation: string) {
  const key = `${system} ${operation}`;
  let made = attributesOf.get(key);
  if (made === undefined) {
    made = { ok: { 'db.system.name': system, 'db.operation.name': operation }, failed: new Map() };
    attributesOf.set(key, made);
  }
  return made;
}

function failedAttributes(made: ReturnType<typeof attributes>, type: string): Attributes {
  let failed = made.failed.get(type);
  if (failed === undefined) {
    failed = { ...made.ok, 'error.type': type };
    // Error class names are few; a store that throws ever new ones still holds a bounded map.
    if (made.failed.size < 32) made.failed.set(type, failed);
  }
  return failed;
}

/**
 * Runs one write of the store named by `location` (`SQLite database …`, `PostgreSQL schema …`) as the
 * operation `operation` (`create_session`, `append_conversation_items`…), observed when an SDK is registered.
 */
export function observedWrite<T>(location: string, operation: string, write: () => Promise<T>): Promise<T> {
  return observeWrite(location.startsWith('PostgreSQL') ? 'postgresql' : 'sqlite', operation, write);
}

/**
 * Runs one write to `system` as `operation` (`create_approval`, `change_mcp_task`…) in a client span
 * `<operation> aptix_sessions` (see {@link WriteSpans}) and records its duration, when an SDK is
 * registered; otherwise runs it alone.
 */
export function observeWrite<T>(
  system: StoreSystem,
  operation: string,
  write: () => Promise<T>,
  spans: WriteSpans = 'always',
): Promise<T> {
  const histogram = writeDuration();
  const traced =
    spans !== 'never' && tracing() && (spans === 'always' || trace.getSpan(context.active())?.isRecording() === true);
  if (histogram === undefined && !traced) return write();
  const made = attributes(system, operation);
  const span = traced
    ? tracer.startSpan(`${operation} aptix_sessions`, { kind: SpanKind.CLIENT, attributes: made.ok })
    : undefined;
  const started = performance.now();
  const settle = (error?: unknown) => {
    const type = error === undefined ? undefined : error instanceof Error ? error.name : '_OTHER';
    histogram?.record(
      (performance.now() - started) / 1000,
      type === undefined ? made.ok : failedAttributes(made, type),
    );
    if (span === undefined) return;
    if (type !== undefined) {
      span.setAttribute('error.type', type);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };
  let pending: Promise<T>;
  try {
    pending = span === undefined ? write() : context.with(trace.setSpan(context.active(), span), write);
  } catch (error) {
    pending = Promise.reject(error as Error);
  }
  return pending.then(
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
