import type { ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AggregationTemporality, MeterProvider, MetricReader, type SumMetricData } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bridgeHarness, freePort, startEverythingHttp, stop, text } from './servers.js';

// The bridge carries the trace context of a call to the remote MCP server (the MCP conventions):
// in the tools/call request's _meta and in the W3C headers of its HTTP request. server-everything
// runs behind a loopback proxy that records what reaches it.

interface Seen {
  readonly traceparent: string | undefined;
  readonly body: { method?: string; params?: { name?: string; _meta?: Record<string, unknown> } };
}

function recordingProxy(target: number, seen: Seen[]): Promise<Server> {
  const proxy = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      try {
        const header = incoming.headers.traceparent;
        seen.push({
          traceparent: typeof header === 'string' ? header : undefined,
          body: JSON.parse(body.toString()) as Seen['body'],
        });
      } catch {
        // a GET or DELETE without a body
      }
      const forwarded = httpRequest(
        { host: '127.0.0.1', port: target, path: incoming.url, method: incoming.method, headers: incoming.headers },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forwarded.on('error', () => outgoing.destroy());
      forwarded.end(body);
    });
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy)));
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

describe('a bridged call with tracing on', () => {
  const spans = new InMemorySpanExporter();
  const reader = new Reader();
  let port: number;
  const seen: Seen[] = [];
  let server: ChildProcess | undefined;
  let proxy: Server | undefined;
  let h: Awaited<ReturnType<typeof bridgeHarness>>;
  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    port = await freePort();
    server = await startEverythingHttp(port);
    proxy = await recordingProxy(port, seen);
    h = await bridgeHarness({
      name: 'traced',
      http: { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp` },
      reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    });
  });
  afterAll(async () => {
    await h?.bridge.close();
    await new Promise((resolve) => proxy?.close(resolve) ?? resolve(undefined));
    await stop(server);
    trace.disable();
    metrics.disable();
    propagation.disable();
    context.disable();
  });

  it('sends the call span context in _meta and in the traceparent header, under the caller trace', async () => {
    const parent = trace.getTracer('test').startSpan('the caller');
    const result = await context.with(trace.setSpan(context.active(), parent), () =>
      h.call('traced_echo', { message: 'traced' }),
    );
    parent.end();
    expect(text(result.value)).toBe('Echo: traced');

    const finished = spans.getFinishedSpans();
    const executed = finished.find((span) => span.name === 'execute_tool traced_echo')!;
    const client = finished.find((span) => span.name === 'tools/call echo')!;
    expect(executed.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(client.parentSpanContext?.spanId).toBe(executed.spanContext().spanId);
    expect(client.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'server.address': '127.0.0.1',
    });

    const expected = `00-${client.spanContext().traceId}-${client.spanContext().spanId}-01`;
    const call = seen.find((entry) => entry.body.method === 'tools/call' && entry.body.params?.name === 'echo')!;
    expect(call.body.params?._meta?.traceparent).toBe(expected);
    expect(call.traceparent).toBe(expected);
  });

  it('counts a reconnect of the server in aptix.mcp_bridge.reconnects', async () => {
    await stop(server, 'SIGKILL');
    const down = await h.call('traced_echo', { message: 'anyone?' });
    expect(down.successful).toBe(false);
    server = await startEverythingHttp(port);
    await vi.waitFor(() => expect(h.bridge.connected).toBe(true), { timeout: 15_000, interval: 20 });
    const { resourceMetrics } = await reader.collect();
    const reconnects = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.descriptor.name === 'aptix.mcp_bridge.reconnects') as SumMetricData;
    expect(reconnects.dataPoints.map((point) => [point.attributes['aptix.mcp_bridge.server'], point.value])).toEqual([
      ['traced', 1],
    ]);
  });
});
