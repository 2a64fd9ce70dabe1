import {
  context as otelContext,
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Meter,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';

/**
 * OpenTelemetry through `@opentelemetry/api` alone: a host (or an application) registers an SDK, and
 * Aptix's packages find it here. With none registered, every check below answers "off" after reading
 * two globals, so a call builds no span, no attribute object and no name string: telemetry that is off
 * costs nothing measurable on the hot paths.
 */

/** The no-op provider the API's proxy delegates to while no SDK is registered. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();
const NOOP_METER_CLASS = createNoopMeter().constructor;

/** True when an SDK's tracer provider is registered globally: only then is a span worth starting. */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider ? provider.getDelegate() !== NOOP_TRACER_PROVIDER : true;
}

/**
 * Instruments made once from the global meter provider, again when another provider is registered
 * (the API's metrics have no proxy: a meter taken before the SDK registers stays a no-op). Returns a
 * getter that answers `undefined` while no SDK's meter provider is registered.
 *
 * @example
 * const instruments = meterInstruments('@aptix/tool-mcp-bridge', (meter) => ({
 *   reconnects: meter.createCounter('aptix.mcp_bridge.reconnects'),
 * }));
 * instruments()?.reconnects.add(1, { server });
 */
export function meterInstruments<T>(scope: string, make: (meter: Meter) => T): () => T | undefined {
  let madeFor: unknown;
  let made: T | undefined;
  return () => {
    const provider = metrics.getMeterProvider();
    if (provider !== madeFor) {
      madeFor = provider;
      const meter = provider.getMeter(scope);
      made = meter.constructor === NOOP_METER_CLASS ? undefined : make(meter);
    }
    return made;
  };
}

/** A tracer of the global provider under `scope` (the API's proxy: it follows an SDK registered later). */
export function scopeTracer(scope: string): Tracer {
  return trace.getTracer(scope);
}

/**
 * Runs `work` in a span that ends when the promise it returns settles; `finish` may add what the result
 * says (an `error.type`). An exception or a rejection marks the span as failed and is passed on.
 * Call it only when {@link tracingEnabled}: it always makes the span.
 */
export function inSpan<T>(
  tracer: Tracer,
  name: string,
  options: SpanOptions,
  work: (span: Span) => T | Promise<T>,
  finish?: (span: Span, value: T) => void,
  parent: Context = otelContext.active(),
): Promise<T> {
  const span = tracer.startSpan(name, options, parent);
  const ended = (value: T): T => {
    try {
      finish?.(span, value);
    } finally {
      span.end();
    }
    return value;
  };
  const failed = (error: unknown): never => {
    failSpan(span, errorType(error), error instanceof Error ? error.message : undefined);
    span.end();
    throw error;
  };
  try {
    const value = otelContext.with(trace.setSpan(parent, span), work, undefined, span);
    return value instanceof Promise ? value.then(ended, failed) : Promise.resolve(ended(value));
  } catch (error) {
    return Promise.reject(failed(error) as unknown);
  }
}

/** Marks a span failed the way the semantic conventions ask: `error.type` and an error status. */
export function failSpan(span: Span, type: string, message?: string): void {
  span.setAttribute('error.type', type);
  span.setStatus(message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message });
}

/** `error.type` for an exception: its class name, as the conventions suggest; `_OTHER` when it has none. */
export function errorType(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name || '_OTHER';
  return '_OTHER';
}

/**
 * Text recorded on a span only when a setting asks for it (arguments, results): cut to `max`
 * characters, with a marker saying how much was left out.
 */
export function truncatedForSpan(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

export { SpanKind, SpanStatusCode, type Attributes, type Span };
