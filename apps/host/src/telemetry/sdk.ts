import { diag, DiagLogLevel, metrics, trace } from '@opentelemetry/api';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { Logger } from 'pino';
import type { OtlpProtocol, TelemetryConfig } from './telemetry-config.js';

/**
 * The OpenTelemetry SDK of a serving host, registered globally so that every package's
 * `@opentelemetry/api` calls reach it. Made only when the configuration turns telemetry on: a host
 * without it registers nothing, and the packages' instrumentation stays a no-op.
 *
 * The trace and metrics SDKs with the OTLP/HTTP exporters, not `@opentelemetry/sdk-node`: sdk-node
 * brings the logs SDK, the gRPC exporters and the auto-instrumentation machinery, none of which the
 * host uses (the packages instrument themselves). Metrics have one reader (see `metricReaders`).
 *
 * The exporters encode in protobuf unless the configuration asks for JSON (`otlpProtocol`,
 * OTEL_EXPORTER_OTLP_PROTOCOL): with a span per request and per call, the encoding is the largest
 * part of what tracing costs the host, and protobuf costs less than half of JSON per span (bench 3c,
 * docs/observability.md). Only the chosen encoding's exporter is loaded.
 */
export interface RunningTelemetry {
  readonly config: TelemetryConfig;
  /** The Prometheus text of the current metrics, when the configuration serves them at /metrics. */
  prometheusText(): Promise<string>;
  /** Routes the SDK's own warnings (an export that failed) to the host's log. */
  useLogger(pino: Logger): void;
  /** Flushes what is buffered (bounded by `timeoutMs`) and unregisters the SDK. */
  shutdown(timeoutMs?: number): Promise<void>;
}

let running: RunningTelemetry | undefined;

/** The telemetry this process started, if any: the HTTP server reads its /metrics from it. */
export function runningTelemetry(): RunningTelemetry | undefined {
  return running;
}

/** Starts the SDK when `config` is set; undefined otherwise. */
export async function startTelemetry(
  config: TelemetryConfig | undefined,
  version: string,
): Promise<RunningTelemetry | undefined> {
  if (config === undefined) return undefined;
  const serviceName = config.serviceName ?? nonEmpty(process.env.OTEL_SERVICE_NAME) ?? 'aptix';
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': serviceName, 'service.version': version }));
  const url = (signal: 'traces' | 'metrics') =>
    config.otlpEndpoint === undefined ? {} : { url: `${config.otlpEndpoint}/v1/${signal}` };

  const tracerProvider = new NodeTracerProvider({
    resource,
    spanProcessors: config.traces
      ? [new BatchSpanProcessor(await traceExporter(config.otlpProtocol.traces, url('traces')))]
      : [],
  });
  // The AsyncLocalStorage context manager and the W3C trace-context and baggage propagators
  // (OTEL_TRACES_SAMPLER honoured). With traces off nothing is registered, so no span is ever made.
  if (config.traces) tracerProvider.register();

  const { readers, prometheus, stopPush } = await metricReaders(config, url('metrics'));
  const meterProvider = new MeterProvider({ resource, readers });
  metrics.setGlobalMeterProvider(meterProvider);

  const serializer = new PrometheusSerializer();
  const telemetry: RunningTelemetry = {
    config,
    async prometheusText() {
      if (prometheus === undefined) return '';
      const { resourceMetrics, errors } = await prometheus.collect();
      for (const error of errors) diag.warn('collecting metrics failed', error);
      return serializer.serialize(resourceMetrics);
    },
    useLogger(pino) {
      const log = pino.child({ component: 'opentelemetry' });
      diag.setLogger(
        {
          error: (message, ...args) => log.error({ args: args.map(String) }, message),
          warn: (message, ...args) => log.warn({ args: args.map(String) }, message),
          info: (message) => log.debug(message),
          debug: () => undefined,
          verbose: () => undefined,
        },
        { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
      );
      if (config.unsupportedProtocol !== undefined)
        log.warn(
          `OTLP protocol "${config.unsupportedProtocol}" (OTEL_EXPORTER_OTLP_*PROTOCOL) is not supported: ` +
            'exporting http/protobuf instead. Fix: point the endpoint at an OTLP/HTTP receiver and set ' +
            'the variable to http/protobuf or http/json.',
        );
    },
    async shutdown(timeoutMs = 2_000) {
      if (running === telemetry) running = undefined;
      // An unreachable endpoint must not hold the host's shutdown for the exporters' own time-outs.
      await Promise.race([
        Promise.allSettled([tracerProvider.shutdown(), stopPush().then(() => meterProvider.shutdown())]),
        new Promise((resolve) => setTimeout(resolve, timeoutMs).unref()),
      ]);
      trace.disable();
      metrics.disable();
      diag.disable();
    },
  };
  running = telemetry;
  return telemetry;
}

interface MetricReaders {
  readonly readers: MetricReader[];
  readonly prometheus: PrometheusExporter | undefined;
  /** Stops the OTLP push of a host that serves /metrics too, after a last push. */
  readonly stopPush: () => Promise<void>;
}

/**
 * One metric reader: the SDK hashes a record's attributes once per reader, so a host exporting OTLP and
 * serving /metrics with two readers paid twice for every tool call. With both, the Prometheus reader is
 * the only one, and the OTLP push exports what it collects, on the same interval as the SDK's periodic
 * reader (both cumulative, the temporality OTLP exporters ask for by default).
 */
async function metricReaders(config: TelemetryConfig, options: { url?: string }): Promise<MetricReaders> {
  const interval = config.metricsIntervalMs ?? envInterval();
  const exporter = config.metrics ? await metricExporter(config.otlpProtocol.metrics, options) : undefined;
  let prometheus: PrometheusExporter | undefined;
  if (config.prometheus !== undefined) {
    const own = config.prometheus === 'route' ? undefined : config.prometheus;
    prometheus = await new Promise<PrometheusExporter>((resolve, reject) => {
      const made: PrometheusExporter = new PrometheusExporter(
        own === undefined ? { preventServerStart: true } : { port: own.port, host: own.host },
        (error) =>
          error
            ? reject(new Error(`The Prometheus port ${own?.host}:${own?.port} cannot be opened: ${error.message}`))
            : resolve(made),
      );
      if (own === undefined) resolve(made);
    });
  }
  if (exporter === undefined)
    return { readers: prometheus === undefined ? [] : [prometheus], prometheus, stopPush: async () => {} };
  if (prometheus === undefined) {
    const reader = new PeriodicExportingMetricReader({
      exporter,
      ...(interval === undefined
        ? {}
        : { exportIntervalMillis: interval, exportTimeoutMillis: Math.min(interval, 30_000) }),
    });
    return { readers: [reader], prometheus, stopPush: async () => {} };
  }
  const source = prometheus;
  let pushing: Promise<void> | undefined;
  const push = (): Promise<void> =>
    (pushing ??= source
      .collect()
      .then(
        ({ resourceMetrics, errors }) =>
          new Promise<void>((resolve) => {
            for (const error of errors) diag.warn('collecting metrics failed', error);
            exporter.export(resourceMetrics, (result) => {
              if (result.error !== undefined) diag.warn('exporting metrics failed', result.error);
              resolve();
            });
          }),
      )
      .catch((error: unknown) => diag.warn('exporting metrics failed', error))
      .finally(() => (pushing = undefined)));
  const timer = setInterval(() => void push(), interval ?? 60_000).unref();
  return {
    readers: [prometheus],
    prometheus,
    stopPush: async () => {
      clearInterval(timer);
      await push();
      await exporter.shutdown();
    },
  };
}

/** The trace exporter of `protocol`, its package loaded only when chosen. */
async function traceExporter(protocol: OtlpProtocol, options: { url?: string }): Promise<SpanExporter> {
  const { OTLPTraceExporter } =
    protocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(options);
}

/** The metric exporter of `protocol`, likewise. */
async function metricExporter(protocol: OtlpProtocol, options: { url?: string }): Promise<PushMetricExporter> {
  const { OTLPMetricExporter } =
    protocol === 'http/json'
      ? await import('@opentelemetry/exporter-metrics-otlp-http')
      : await import('@opentelemetry/exporter-metrics-otlp-proto');
  return new OTLPMetricExporter(options);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function envInterval(): number | undefined {
  const value = Number(nonEmpty(process.env.OTEL_METRIC_EXPORT_INTERVAL));
  return Number.isInteger(value) && value > 0 ? value : undefined;
}
