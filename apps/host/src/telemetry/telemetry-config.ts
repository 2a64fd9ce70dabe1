import { Type, type Static } from 'typebox';

/** The `telemetry` section of `aptix.config.json` (docs/observability.md). */
export const TelemetryConfigFile = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'Turn OpenTelemetry on: traces and metrics over OTLP/HTTP, and /metrics when prometheus is set (default false; APTIX_TELEMETRY=on|off overrides it; OTEL_SDK_DISABLED=true switches it off).',
      }),
    ),
    traces: Type.Optional(
      Type.Boolean({
        description:
          'Export traces over OTLP (default true when enabled; OTEL_TRACES_EXPORTER=none also switches them off).',
      }),
    ),
    metrics: Type.Optional(
      Type.Boolean({
        description:
          'Export metrics over OTLP (default true when enabled; OTEL_METRICS_EXPORTER=none also switches them off).',
      }),
    ),
    otlpEndpoint: Type.Optional(
      Type.String({
        // A pattern, not format: uri: the configuration's ajv loads no formats.
        pattern: '^https?://\\S+$',
        description:
          'Base URL of the OTLP/HTTP receiver, e.g. http://127.0.0.1:4318; /v1/traces and ' +
          '/v1/metrics are added. Default: OTEL_EXPORTER_OTLP_ENDPOINT (and the per-signal OTEL_* ' +
          'variables), else http://localhost:4318.',
      }),
    ),
    otlpProtocol: Type.Optional(
      Type.Union([Type.Literal('http/protobuf'), Type.Literal('http/json')], {
        description:
          'The OTLP/HTTP encoding: http/protobuf (the OpenTelemetry default, and the cheaper one for the ' +
          'host to make) or http/json. Default: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or ' +
          'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL for each signal, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf.',
      }),
    ),
    serviceName: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'service.name of the resource (default OTEL_SERVICE_NAME, else "aptix").',
      }),
    ),
    metricsIntervalMs: Type.Optional(
      Type.Integer({
        minimum: 100,
        description: 'How often metrics are exported over OTLP, in ms (default 60000, or OTEL_METRIC_EXPORT_INTERVAL).',
      }),
    ),
    prometheus: Type.Optional(
      Type.Union(
        [
          Type.Boolean(),
          Type.Object(
            {
              port: Type.Integer({
                minimum: 0,
                maximum: 65535,
                description: 'Serve /metrics on this port of its own, without API keys.',
              }),
              host: Type.Optional(
                Type.String({ minLength: 1, description: 'Address of that port (default 127.0.0.1).' }),
              ),
            },
            { additionalProperties: false },
          ),
        ],
        {
          description:
            'Serve metrics in the Prometheus text format: true at GET /metrics on the host (API key with the admin permission), or { port } on a port of its own.',
        },
      ),
    ),
    recordContent: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 65536,
        description: 'Record tool arguments and results on spans, cut to this many characters (default 0: never).',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'OpenTelemetry traces and metrics (docs/observability.md). Off when absent.',
  },
);
export type TelemetryConfigFile = Static<typeof TelemetryConfigFile>;

/** The OTLP/HTTP encodings the host can export in (no gRPC). */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** The resolved telemetry settings; `undefined` in AptixConfig when telemetry is off. */
export interface TelemetryConfig {
  readonly traces: boolean;
  readonly metrics: boolean;
  /** Base URL of the OTLP receiver when the file names one; otherwise the exporters read OTEL_EXPORTER_OTLP_* themselves. */
  readonly otlpEndpoint: string | undefined;
  /** The encoding of each signal's OTLP export. */
  readonly otlpProtocol: { readonly traces: OtlpProtocol; readonly metrics: OtlpProtocol };
  /**
   * An OTEL_EXPORTER_OTLP_*PROTOCOL value the host cannot honour (`grpc`): it exports http/protobuf
   * instead and says so in its log at start.
   */
  readonly unsupportedProtocol: string | undefined;
  readonly serviceName: string | undefined;
  readonly metricsIntervalMs: number | undefined;
  /** `'route'`: GET /metrics on the host; `{ port, host }`: a port of its own; undefined: no Prometheus format. */
  readonly prometheus: 'route' | { readonly port: number; readonly host: string } | undefined;
  readonly recordContent: number;
}

/**
 * Resolves the section against the environment. Off by default: on only when the file says
 * `enabled: true` or APTIX_TELEMETRY=on, and never with OTEL_SDK_DISABLED=true.
 */
export function resolveTelemetryConfig(
  file: TelemetryConfigFile | undefined,
  env: NodeJS.ProcessEnv,
  onOff: (value: string | undefined, name: string) => boolean | undefined,
): TelemetryConfig | undefined {
  const enabled = onOff(nonEmpty(env.APTIX_TELEMETRY), 'APTIX_TELEMETRY') ?? file?.enabled ?? false;
  if (!enabled || nonEmpty(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return undefined;
  const prometheus = file?.prometheus;
  const traces = otlpProtocol(file?.otlpProtocol, env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, env);
  const metrics = otlpProtocol(file?.otlpProtocol, env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, env);
  return {
    traces: (file?.traces ?? true) && !exporterNone(env.OTEL_TRACES_EXPORTER),
    metrics: (file?.metrics ?? true) && !exporterNone(env.OTEL_METRICS_EXPORTER),
    otlpEndpoint: file?.otlpEndpoint?.replace(/\/+$/, ''),
    otlpProtocol: { traces: traces.protocol, metrics: metrics.protocol },
    unsupportedProtocol: traces.unsupported ?? metrics.unsupported,
    serviceName: file?.serviceName,
    metricsIntervalMs: file?.metricsIntervalMs,
    prometheus:
      prometheus === undefined || prometheus === false
        ? undefined
        : prometheus === true
          ? 'route'
          : { port: prometheus.port, host: prometheus.host ?? '127.0.0.1' },
    recordContent: file?.recordContent ?? 0,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * A signal's OTLP encoding: the file's field, else the signal's own variable, else the general one, else
 * http/protobuf (the OpenTelemetry default). A variable naming an encoding the host lacks (`grpc`) is
 * reported and http/protobuf is used.
 */
function otlpProtocol(
  field: OtlpProtocol | undefined,
  signalVariable: string | undefined,
  env: NodeJS.ProcessEnv,
): { protocol: OtlpProtocol; unsupported?: string } {
  if (field !== undefined) return { protocol: field };
  const named = nonEmpty(signalVariable) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL);
  if (named === undefined) return { protocol: 'http/protobuf' };
  const word = named.toLowerCase();
  return word === 'http/json' || word === 'http/protobuf'
    ? { protocol: word }
    : { protocol: 'http/protobuf', unsupported: named };
}

function exporterNone(value: string | undefined): boolean {
  return nonEmpty(value)?.toLowerCase() === 'none';
}
