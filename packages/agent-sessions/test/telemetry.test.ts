import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics, trace } from '@opentelemetry/api';
import {
  AggregationTemporality,
  MeterProvider,
  MetricReader,
  type HistogramMetricData,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteSessionStore } from '../src/sqlite/index.js';
import { fixedModes } from './fixtures/modes.js';

// The store's writes under a registered OpenTelemetry SDK: a client span each, and the
// db.client.operation.duration histogram by store and operation (what an operator reads to see
// whether the session store is slow today).

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

describe('session store writes with an OpenTelemetry SDK registered', () => {
  const spans = new InMemorySpanExporter();
  const reader = new Reader();
  const dir = mkdtempSync(join(tmpdir(), 'aptix-store-otel-'));
  beforeAll(() => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  });
  afterAll(() => {
    trace.disable();
    metrics.disable();
    rmSync(dir, { recursive: true, force: true });
  });

  it('spans each write and records its duration by operation; a refused write is marked failed', async () => {
    const store = await openSqliteSessionStore({ filename: join(dir, 'aptix.db'), modes: fixedModes() });
    try {
      const session = await store.createSession({});
      await store.appendConversationItems(session.id, [{ type: 'message', role: 'user', content: 'hi' }]);
      await store.setSessionMode(session.id, 'code_review', 'review the change', null, null);
      await expect(store.appendConversationItems('no-such-session', [{ type: 'message' }])).rejects.toThrow();
    } finally {
      await store.close();
    }
    const names = spans.getFinishedSpans().map((span) => span.name);
    expect(names).toEqual([
      'create_session aptix_sessions',
      'append_conversation_items aptix_sessions',
      'change_mode aptix_sessions',
      'append_conversation_items aptix_sessions',
    ]);
    const [created, , , refused] = spans.getFinishedSpans();
    expect(created!.attributes).toEqual({ 'db.system.name': 'sqlite', 'db.operation.name': 'create_session' });
    expect(refused!.attributes['error.type']).toBe('SessionStoreError');

    const { resourceMetrics } = await reader.collect();
    const duration = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.descriptor.name === 'db.client.operation.duration') as HistogramMetricData;
    const counts = Object.fromEntries(
      duration.dataPoints.map((point) => [
        `${String(point.attributes['db.operation.name'])}${point.attributes['error.type'] ? ' failed' : ''}`,
        point.value.count,
      ]),
    );
    expect(counts).toEqual({
      create_session: 1,
      append_conversation_items: 1,
      change_mode: 1,
      'append_conversation_items failed': 1,
    });
  });
});
