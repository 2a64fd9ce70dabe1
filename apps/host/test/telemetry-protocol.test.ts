/**
 * The OTLP encoding (issue 34): a host exports http/protobuf by default (the OpenTelemetry default, and
 * the cheaper one to make), http/json when its configuration or OTEL_EXPORTER_OTLP_PROTOCOL asks for it,
 * and says in its log that gRPC is not supported when the variable asks for that.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startHostWithConfig, type RunningHost } from './support.js';
import { OtlpReceiver } from './otlp-receiver.js';

const FAST_EXPORT = { OTEL_BSP_SCHEDULE_DELAY: '100' };

describe('the OTLP encoding of a host with telemetry on', () => {
  const stops: Array<() => Promise<unknown> | void> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  async function hostExportingTo(telemetry: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
    const receiver = await new OtlpReceiver().start();
    stops.push(() => receiver.close());
    const { host, space } = await startHostWithConfig(
      { telemetry: { enabled: true, otlpEndpoint: receiver.url, metricsIntervalMs: 300, ...telemetry } },
      { ...FAST_EXPORT, ...env },
    );
    stops.push(space.cleanup, () => host.stop());
    return { host, receiver };
  }

  async function invokedAndExported(host: RunningHost, receiver: OtlpReceiver): Promise<void> {
    const answer = await fetch(`${host.url}/v1/tools/testing_ping_pong/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { message: 'hello', count: 1 } }),
    });
    expect(answer.status).toBe(200);
    const http = await receiver.span((span) => span.name === 'POST /v1/tools/:name/invoke');
    const call = await receiver.span((span) => span.parentSpanId === http.spanId);
    expect(call.name).toBe('execute_tool testing_ping_pong');
    expect(call.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'testing_ping_pong',
    });
    while (!receiver.points.some((point) => point.metric === 'aptix.tool.call.duration'))
      await new Promise((resolve) => setTimeout(resolve, 50));
  }

  it('is http/protobuf by default, for traces and metrics', async () => {
    const { host, receiver } = await hostExportingTo({});
    await invokedAndExported(host, receiver);
    expect(new Set(receiver.exports.map((sent) => sent.type))).toEqual(new Set(['application/x-protobuf']));
  });

  it('is http/json when the configuration says otlpProtocol: http/json', async () => {
    const { host, receiver } = await hostExportingTo({ otlpProtocol: 'http/json' });
    await invokedAndExported(host, receiver);
    expect(new Set(receiver.exports.map((sent) => sent.type))).toEqual(new Set(['application/json']));
  });

  it('follows OTEL_EXPORTER_OTLP_PROTOCOL, and a per-signal variable over it', async () => {
    const { host, receiver } = await hostExportingTo(
      {},
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/protobuf' },
    );
    await invokedAndExported(host, receiver);
    const exported = (path: string) => receiver.exports.filter((sent) => sent.path === path).map((sent) => sent.type);
    expect(new Set(exported('/v1/traces'))).toEqual(new Set(['application/json']));
    expect(new Set(exported('/v1/metrics'))).toEqual(new Set(['application/x-protobuf']));
  });

  it('exports http/protobuf and says so when the variable asks for gRPC', async () => {
    const { host, receiver } = await hostExportingTo({}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    await invokedAndExported(host, receiver);
    expect(new Set(receiver.exports.map((sent) => sent.type))).toEqual(new Set(['application/x-protobuf']));
    expect(host.output()).toContain('OTLP protocol \\"grpc\\"');
  });
});
