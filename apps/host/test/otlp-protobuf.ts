/**
 * Decodes the OTLP/HTTP protobuf bodies the host exports (ExportTraceServiceRequest and
 * ExportMetricsServiceRequest, opentelemetry-proto v1) into the shape of their JSON encoding, as far as
 * the tests read them: ids in hex, attributes as `{ key, value: { stringValue | intValue | … } }`, the
 * data points' `count`, `asInt` and `asDouble`. A reader of the wire format written from the .proto
 * field numbers, independent of the exporter's own serializer.
 */

type Field = { readonly number: number; readonly varint?: bigint; readonly bytes?: Buffer; readonly fixed?: Buffer };

/** The fields of one message, in order; nested messages stay bytes until read. */
function fields(buffer: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = buffer[at++];
      if (byte === undefined) throw new Error('a truncated varint');
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < buffer.length) {
    const tag = Number(varint());
    const number = tag >>> 3;
    switch (tag & 7) {
      case 0:
        out.push({ number, varint: varint() });
        break;
      case 1:
        out.push({ number, fixed: buffer.subarray(at, (at += 8)) });
        break;
      case 2: {
        const length = Number(varint());
        out.push({ number, bytes: buffer.subarray(at, (at += length)) });
        break;
      }
      case 5:
        out.push({ number, fixed: buffer.subarray(at, (at += 4)) });
        break;
      default:
        throw new Error(`wire type ${tag & 7} is not used by OTLP`);
    }
  }
  return out;
}

const all = (message: Field[], number: number): Buffer[] =>
  message.flatMap((field) => (field.number === number && field.bytes !== undefined ? [field.bytes] : []));
const one = (message: Field[], number: number): Field | undefined => message.find((field) => field.number === number);
const text = (message: Field[], number: number): string | undefined => one(message, number)?.bytes?.toString('utf8');
const hex = (message: Field[], number: number): string | undefined => one(message, number)?.bytes?.toString('hex');

/** AnyValue: 1 string, 2 bool, 3 int64, 4 double. */
function anyValue(bytes: Buffer): Record<string, unknown> {
  const value = fields(bytes);
  const string = text(value, 1);
  if (string !== undefined) return { stringValue: string };
  const bool = one(value, 2)?.varint;
  if (bool !== undefined) return { boolValue: bool !== 0n };
  const int = one(value, 3)?.varint;
  if (int !== undefined) {
    // A number, as the JS JSON exporter sends it, while it is exact; the int64's text beyond.
    const signed = BigInt.asIntN(64, int);
    const exact = signed <= BigInt(Number.MAX_SAFE_INTEGER) && signed >= BigInt(Number.MIN_SAFE_INTEGER);
    return { intValue: exact ? Number(signed) : String(signed) };
  }
  const double = one(value, 4)?.fixed;
  return double === undefined ? {} : { doubleValue: double.readDoubleLE(0) };
}

/** Repeated KeyValue (1 key, 2 value) at field `number`. */
function attributes(message: Field[], number: number): Array<{ key: string; value: Record<string, unknown> }> {
  return all(message, number).map((bytes) => {
    const pair = fields(bytes);
    const value = one(pair, 2)?.bytes;
    return { key: text(pair, 1) ?? '', value: value === undefined ? {} : anyValue(value) };
  });
}

/** Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 13 links, 15 status. */
function span(bytes: Buffer): Record<string, unknown> {
  const message = fields(bytes);
  const status = one(message, 15)?.bytes;
  const statusFields = status === undefined ? [] : fields(status);
  return {
    traceId: hex(message, 1),
    spanId: hex(message, 2),
    parentSpanId: hex(message, 4),
    name: text(message, 5),
    kind: Number(one(message, 6)?.varint ?? 0n),
    attributes: attributes(message, 9),
    links: all(message, 13).map((link) => ({ traceId: hex(fields(link), 1), spanId: hex(fields(link), 2) })),
    status: { code: Number(one(statusFields, 3)?.varint ?? 0n), message: text(statusFields, 2) },
  };
}

/** NumberDataPoint (7 attributes, 4 as_double, 6 as_int) or HistogramDataPoint (9 attributes, 4 count). */
function dataPoint(bytes: Buffer, histogram: boolean): Record<string, unknown> {
  const message = fields(bytes);
  if (histogram)
    return { attributes: attributes(message, 9), count: String(one(message, 4)?.fixed?.readBigUInt64LE(0)) };
  const double = one(message, 4)?.fixed;
  const int = one(message, 6)?.fixed;
  return {
    attributes: attributes(message, 7),
    ...(double === undefined ? {} : { asDouble: double.readDoubleLE(0) }),
    ...(int === undefined ? {} : { asInt: String(int.readBigInt64LE(0)) }),
  };
}

/** Metric: 1 name, 5 gauge, 7 sum, 9 histogram; each holds its data points at field 1. */
function metric(bytes: Buffer): Record<string, unknown> {
  const message = fields(bytes);
  const out: Record<string, unknown> = { name: text(message, 1) };
  for (const [number, key] of [
    [5, 'gauge'],
    [7, 'sum'],
    [9, 'histogram'],
  ] as const) {
    const body = one(message, number)?.bytes;
    if (body !== undefined)
      out[key] = { dataPoints: all(fields(body), 1).map((point) => dataPoint(point, key === 'histogram')) };
  }
  return out;
}

/** The JSON-shaped body of an OTLP/HTTP protobuf export of `signal`. */
export function decodeOtlpProtobuf(signal: 'traces' | 'metrics', body: Buffer): Record<string, unknown> {
  // Export*ServiceRequest: 1 resource_*; Resource*: 1 resource (1 attributes), 2 scope_*; Scope*: 2 spans / metrics.
  const resources = all(fields(body), 1).map((bytes) => {
    const message = fields(bytes);
    const resource = one(message, 1)?.bytes;
    return {
      resource: { attributes: resource === undefined ? [] : attributes(fields(resource), 1) },
      scopes: all(message, 2).map((scope) => all(fields(scope), 2)),
    };
  });
  if (signal === 'traces')
    return {
      resourceSpans: resources.map(({ resource, scopes }) => ({
        resource,
        scopeSpans: scopes.map((spans) => ({ spans: spans.map(span) })),
      })),
    };
  return {
    resourceMetrics: resources.map(({ resource, scopes }) => ({
      resource,
      scopeMetrics: scopes.map((metrics) => ({ metrics: metrics.map(metric) })),
    })),
  };
}
