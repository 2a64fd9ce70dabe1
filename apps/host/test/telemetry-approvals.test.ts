/**
 * An approval that crosses hosts stays in its trace (issue 34): two `aptix serve` processes share one
 * session store (SQLite and PostgreSQL) and export their spans over OTLP/HTTP to one receiver. Host A
 * asks (its ask span stores its traceparent with the approval); host B decides and runs the call, and
 * its decision and execution spans link to A's ask span. The store's approval writes are spans too,
 * children of the step that made them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import { scratch, startHost, type RunningHost } from './support.js';
import { postJson, storeBackends } from './suites.js';

const TRACE_ID = '5bf92f3577b34da6a3ce929d0e0e4737';
const CALLER_SPAN = '10f067aa0ba902b8';

const backends = await storeBackends('aptix_otel_approvals', 'the cross-host approval trace tests on PostgreSQL are');

describe.each(backends)('an approval asked on one host and decided on another ($name)', (backend) => {
  const database = backend.setup();
  const space = scratch();
  const receiver = new OtlpReceiver();
  let a: RunningHost;
  let b: RunningHost;

  /** A host on the shared store, exporting as `service` every 100 ms. */
  async function host(service: string): Promise<RunningHost> {
    const config = join(space.dir, `${service}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        db: database.db,
        telemetry: { enabled: true, otlpEndpoint: receiver.url, serviceName: service },
      }),
    );
    return startHost({ args: ['--config', config], env: { OTEL_BSP_SCHEDULE_DELAY: '100' } });
  }

  beforeAll(async () => {
    await receiver.start();
    // One after the other: the first migrates the shared store.
    a = await host('aptix-a');
    b = await host('aptix-b');
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await receiver.close();
    await database.dispose();
    space.cleanup();
  });

  const childOf = (parent: ReceivedSpan) => (span: ReceivedSpan) =>
    span.parentSpanId === parent.spanId && span.traceId === parent.traceId;

  it("links host B's decision and execution to host A's ask span, and spans the store's writes", async () => {
    const session = await postJson(a, '/v1/sessions', { mode: 'tool_diagnostics' });
    expect(session.status).toBe(201);
    const asked = await postJson(
      a,
      '/v1/tools/testing_issue_refund/invoke',
      { arguments: { orderId: 'A-7100', amount: 7100, currency: 'EUR' }, context: { sessionId: session.body.id } },
      { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    );
    expect(asked.status).toBe(202);
    const approvalId = asked.body.approvalId as string;

    const ask = await receiver.span(
      (span) => span.name === 'aptix.approval.ask' && span.attributes['aptix.approval.id'] === approvalId,
    );
    // The ask is part of the calling request's trace, on host A.
    expect(ask).toMatchObject({ serviceName: 'aptix-a', traceId: TRACE_ID });
    const created = await receiver.span(childOf(ask));
    expect(created).toMatchObject({ name: 'create_approval aptix_sessions', kind: 3, serviceName: 'aptix-a' });
    expect(created.attributes).toMatchObject({ 'db.operation.name': 'create_approval' });

    const decided = await postJson(b, `/v1/approvals/${approvalId}`, { decision: 'approve' });
    expect(decided).toMatchObject({ status: 200, body: { id: approvalId, status: 'executed' } });
    // The approval shown over HTTP keeps its shape: the stored traceparent is not part of it.
    expect(decided.body.traceparent).toBeUndefined();

    const toAsk = { traceId: ask.traceId, spanId: ask.spanId };
    const decide = await receiver.span(
      (span) => span.name === 'aptix.approval.decide' && span.attributes['aptix.approval.id'] === approvalId,
    );
    expect(decide.serviceName).toBe('aptix-b');
    // Host B's request starts a trace of its own; the link leads back to the ask.
    expect(decide.traceId).not.toBe(TRACE_ID);
    expect(decide.links).toEqual([toAsk]);
    const execute = await receiver.span(
      (span) => span.name === 'aptix.approval.execute' && span.attributes['aptix.approval.id'] === approvalId,
    );
    expect(execute).toMatchObject({ serviceName: 'aptix-b', parentSpanId: decide.spanId, traceId: decide.traceId });
    expect(execute.links).toEqual([toAsk]);
    expect(execute.attributes['aptix.approval.status']).toBe('executed');
    const call = await receiver.span(
      (span) => childOf(execute)(span) && span.name === 'execute_tool testing_issue_refund',
    );
    expect(call.serviceName).toBe('aptix-b');

    // The decision's store writes are children of the steps that made them.
    const decideWrite = await receiver.span(
      (span) => childOf(decide)(span) && span.name === 'decide_approval aptix_sessions',
    );
    expect(decideWrite.attributes['db.system.name']).toBe(backend.name === 'SQLite' ? 'sqlite' : 'postgresql');
    await receiver.span((span) => childOf(decide)(span) && span.name === 'claim_approval aptix_sessions');
    await receiver.span((span) => childOf(execute)(span) && span.name === 'complete_approval aptix_sessions');
  });

  it('links a denial on host B to the ask on host A too; nothing is executed', async () => {
    const session = await postJson(a, '/v1/sessions', { mode: 'tool_diagnostics' });
    const asked = await postJson(a, '/v1/tools/testing_issue_refund/invoke', {
      arguments: { orderId: 'A-7200', amount: 7200, currency: 'EUR' },
      context: { sessionId: session.body.id },
    });
    const approvalId = asked.body.approvalId as string;
    const ask = await receiver.span(
      (span) => span.name === 'aptix.approval.ask' && span.attributes['aptix.approval.id'] === approvalId,
    );
    const denied = await postJson(b, `/v1/approvals/${approvalId}`, { decision: 'deny', note: 'not this one' });
    expect(denied).toMatchObject({ status: 200, body: { status: 'denied' } });
    const decide = await receiver.span(
      (span) => span.name === 'aptix.approval.decide' && span.attributes['aptix.approval.id'] === approvalId,
    );
    expect(decide).toMatchObject({ serviceName: 'aptix-b', attributes: { 'aptix.approval.outcome': 'decided' } });
    expect(decide.links).toEqual([{ traceId: ask.traceId, spanId: ask.spanId }]);
    // Give a wrongly made execution time to arrive, then check there is none.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(
      receiver.spans.filter(
        (span) => span.name === 'aptix.approval.execute' && span.attributes['aptix.approval.id'] === approvalId,
      ),
    ).toEqual([]);
  });
});
