import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, metrics, ROOT_CONTEXT, SpanKind, trace, type Context, type ContextManager } from '@opentelemetry/api';
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

/**
 * The active context kept in an AsyncLocalStorage, as the Node SDK's context manager keeps it (this
 * package does not depend on the SDK's): spans made inside a span's callback are its children.
 */
class AsyncLocalContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    active: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(active, () => fn.call(thisArg, ...args));
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

describe('session store writes with an OpenTelemetry SDK registered', () => {
  const spans = new InMemorySpanExporter();
  const reader = new Reader();
  const dir = mkdtempSync(join(tmpdir(), 'aptix-store-otel-'));
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalContextManager());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  });
  afterAll(() => {
    trace.disable();
    metrics.disable();
    context.disable();
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

  it("spans the approval and task stores' writes; a sweep's writes only inside a running span", async () => {
    spans.reset();
    const store = await openSqliteSessionStore({ filename: join(dir, 'approvals.db'), modes: fixedModes() });
    const tracer = trace.getTracer('test');
    try {
      const asked = await store.approvals.create({
        sessionId: null,
        toolName: 'testing_issue_refund',
        arguments: '{}',
        reason: 'needs a person',
        requestedBy: null,
        ttlMs: 60_000,
      });
      await store.approvals.decide(asked.id, 'approve', 'alice', null);
      await store.approvals.claim(asked.id, 'host-a');
      await store.approvals.complete(asked.id, 'executed', { successful: true });
      const task = await store.tasks.create({ owner: null, toolName: 'testing_delay', ttlMs: 60_000 });
      await store.tasks.change(task.id, { status: 'completed', result: {} }, { from: ['working'] });
      // The sweep, on its timer: no span of its own, so an idle host sends none.
      await store.approvals.expireDue();
      await store.tasks.heartbeat([task.id]);
      await store.tasks.deleteExpired();
      // The same sweep inside a span (a request's): its writes are that span's children.
      await tracer.startActiveSpan('sweep', async (sweep) => {
        await store.approvals.expireDue();
        await store.approvals.abandonStale(60_000);
        sweep.end();
      });
    } finally {
      await store.close();
    }
    const finished = spans.getFinishedSpans();
    expect(finished.map((span) => span.name)).toEqual([
      'create_approval aptix_sessions',
      'decide_approval aptix_sessions',
      'claim_approval aptix_sessions',
      'complete_approval aptix_sessions',
      'create_mcp_task aptix_sessions',
      'change_mcp_task aptix_sessions',
      'expire_approvals aptix_sessions',
      'abandon_stale_approvals aptix_sessions',
      'sweep',
    ]);
    const sweep = finished.at(-1)!;
    for (const write of finished.slice(-3, -1)) {
      expect(write.parentSpanContext?.spanId).toBe(sweep.spanContext().spanId);
      expect(write.kind).toBe(SpanKind.CLIENT);
    }
    expect(finished[0]!.attributes).toEqual({ 'db.system.name': 'sqlite', 'db.operation.name': 'create_approval' });

    const { resourceMetrics } = await reader.collect();
    const duration = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.descriptor.name === 'db.client.operation.duration') as HistogramMetricData;
    const count = (operation: string) =>
      duration.dataPoints.find((point) => point.attributes['db.operation.name'] === operation)?.value.count;
    // Every write is measured, spanned or not.
    expect(count('expire_approvals')).toBe(2);
    expect(count('heartbeat_mcp_tasks')).toBe(1);
    expect(count('delete_expired_mcp_tasks')).toBe(1);
    expect(count('decide_approval')).toBe(1);
  });
});
