import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeOtlpProtobuf } from './otlp-protobuf.js';

/** One span as an OTLP/HTTP JSON export carries it, with its attributes flattened. */
export interface ReceivedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly links: ReadonlyArray<{ traceId: string; spanId: string }>;
  readonly status: { code?: number };
  readonly serviceName: unknown;
}

/** One metric data point of an OTLP/HTTP JSON export. */
export interface ReceivedPoint {
  readonly metric: string;
  readonly attributes: Record<string, unknown>;
  readonly count?: number;
  readonly value?: number;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
type OtlpAttributes = Array<{ key: string; value: OtlpValue }> | undefined;

function flatten(attributes: OtlpAttributes): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of attributes ?? [])
    out[key] = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
  return out;
}

/**
 * A small OTLP/HTTP receiver on loopback, for both encodings (http/protobuf, the host's default, and
 * http/json): the host under test exports to it over real HTTP, as it would to a collector. Protobuf
 * bodies are decoded into the JSON encoding's shape, so the tests read either the same way.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly points: ReceivedPoint[] = [];
  /** Each export received, in order: its path and content type. */
  readonly exports: Array<{ readonly path: string | undefined; readonly type: string }> = [];
  #server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        try {
          const type = request.headers['content-type'] ?? '';
          this.exports.push({ path: request.url, type });
          const body = Buffer.concat(chunks);
          const protobuf = type === 'application/x-protobuf';
          const signal =
            request.url === '/v1/traces' ? 'traces' : request.url === '/v1/metrics' ? 'metrics' : undefined;
          if (signal !== undefined) {
            const data = protobuf
              ? decodeOtlpProtobuf(signal, body)
              : (JSON.parse(body.toString('utf8')) as Record<string, unknown>);
            if (signal === 'traces') this.#traces(data);
            else this.#metrics(data);
          }
          // An empty ExportServiceResponse, in the request's encoding.
          if (protobuf) response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
          else response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch {
          response.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  /** Waits until a span that `match` accepts has arrived. */
  async span(match: (span: ReceivedSpan) => boolean, timeoutMs = 15_000): Promise<ReceivedSpan> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.spans.find(match);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no such span arrived; got: ${this.spans.map((span) => span.name).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  #traces(data: Record<string, unknown>): void {
    const resourceSpans = (data.resourceSpans ?? []) as Array<{
      resource?: { attributes?: OtlpAttributes };
      scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
    }>;
    for (const resource of resourceSpans) {
      const serviceName = flatten(resource.resource?.attributes)['service.name'];
      for (const scope of resource.scopeSpans ?? [])
        for (const span of scope.spans ?? [])
          this.spans.push({
            name: span.name as string,
            traceId: span.traceId as string,
            spanId: span.spanId as string,
            parentSpanId: (span.parentSpanId as string | undefined) || undefined,
            kind: span.kind as number,
            attributes: flatten(span.attributes as OtlpAttributes),
            links: ((span.links ?? []) as Array<{ traceId: string; spanId: string }>).map(({ traceId, spanId }) => ({
              traceId,
              spanId,
            })),
            status: (span.status ?? {}) as { code?: number },
            serviceName,
          });
    }
  }

  #metrics(data: Record<string, unknown>): void {
    const resourceMetrics = (data.resourceMetrics ?? []) as Array<{
      scopeMetrics?: Array<{ metrics?: Array<Record<string, unknown>> }>;
    }>;
    for (const resource of resourceMetrics)
      for (const scope of resource.scopeMetrics ?? [])
        for (const metric of scope.metrics ?? []) {
          const body = (metric.histogram ?? metric.sum ?? metric.gauge) as
            { dataPoints?: Array<Record<string, unknown>> } | undefined;
          for (const point of body?.dataPoints ?? [])
            this.points.push({
              metric: metric.name as string,
              attributes: flatten(point.attributes as OtlpAttributes),
              ...(point.count === undefined ? {} : { count: Number(point.count) }),
              ...(point.asInt === undefined && point.asDouble === undefined
                ? {}
                : { value: Number(point.asInt ?? point.asDouble) }),
            });
        }
  }
}
