/**
 * OpenTelemetry on a real host process (issue 34): `aptix serve` with telemetry on exports spans and
 * metrics over OTLP/HTTP to a receiver on loopback, takes the caller's W3C trace context from the
 * `traceparent` header and from MCP's `_meta.traceparent`, serves /metrics to admins only, and keeps
 * serving when the OTLP endpoint cannot be reached or the trace context is malformed or huge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, runCli, scratch, startHostWithConfig, type RunningHost } from './support.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const ADMIN = 'admin-key-0123456789';
const READER = 'reader-key-0123456789';
const KEYS = `ops=${ADMIN},reader=${READER}`;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const META_TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const META_SPAN = 'b7ad6b7169203331';
const INVOKE = '/v1/tools/testing_ping_pong/invoke';
const PING = { message: 'hello', count: 1 };

const MODERN_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'testing_ping_pong',
};
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'telemetry-test', version: '0.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

function telemetryFields(endpoint: string): Record<string, unknown> {
  return {
    telemetry: { enabled: true, otlpEndpoint: endpoint, metricsIntervalMs: 300, prometheus: true },
    principals: { reader: { admin: false } },
    approvals: { allowSelfApproval: ['testing_issue_refund'] },
  };
}

/** Spans flush every 100 ms instead of 5 s, so a test waits little for them. */
const FAST_EXPORT = { OTEL_BSP_SCHEDULE_DELAY: '100', APTIX_API_KEYS: KEYS };

async function invoke(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}${INVOKE}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}`, ...headers },
    body: JSON.stringify({ arguments: PING }),
  });
}

async function mcpCall(url: string, id: number, meta: Record<string, unknown>): Promise<Response> {
  return fetch(`${url}/mcp/modes/tool_diagnostics`, {
    method: 'POST',
    headers: { ...MODERN_HEADERS, authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'testing_ping_pong', arguments: PING, _meta: { ...ENVELOPE, ...meta } },
    }),
  });
}

describe('a host with telemetry on, exporting to an OTLP/HTTP receiver', () => {
  const receiver = new OtlpReceiver();
  let host: RunningHost;
  let cleanup: () => void;
  beforeAll(async () => {
    await receiver.start();
    const started = await startHostWithConfig(telemetryFields(receiver.url), FAST_EXPORT);
    host = started.host;
    cleanup = started.space.cleanup;
  });
  afterAll(async () => {
    await host?.stop();
    cleanup?.();
    await receiver.close();
  });

  const childOf = (parent: ReceivedSpan) => (span: ReceivedSpan) =>
    span.parentSpanId === parent.spanId && span.traceId === parent.traceId;

  it("continues the caller's traceparent: the HTTP span is its child, and the tool call's span is the HTTP span's", async () => {
    const answer = await invoke(host.url, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    expect(answer.status).toBe(200);
    const http = await receiver.span((span) => span.traceId === TRACE_ID && span.kind === 2);
    expect(http.name).toBe(`POST /v1/tools/:name/invoke`);
    expect(http.parentSpanId).toBe(CALLER_SPAN);
    expect(http.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/tools/:name/invoke',
      'url.path': INVOKE,
      'http.response.status_code': 200,
    });
    expect(http.serviceName).toBe('aptix');
    const call = await receiver.span(childOf(http));
    expect(call.name).toBe('execute_tool testing_ping_pong');
    expect(call.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'testing_ping_pong',
    });
    // Arguments are never recorded unless a setting asks.
    expect(call.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
  });

  it('makes an MCP request span from _meta.traceparent (fast lane), linked to the HTTP span, parent of the tool call', async () => {
    const answer = await mcpCall(host.url, 41, { traceparent: `00-${META_TRACE_ID}-${META_SPAN}-01` });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('pong: hello');
    const mcp = await receiver.span((span) => span.traceId === META_TRACE_ID && span.kind === 2);
    expect(mcp.name).toBe('tools/call testing_ping_pong');
    expect(mcp.parentSpanId).toBe(META_SPAN);
    expect(mcp.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': '41',
      'mcp.protocol.version': '2026-07-28',
      'gen_ai.tool.name': 'testing_ping_pong',
    });
    const http = await receiver.span((span) => span.spanId === mcp.links[0]?.spanId);
    expect(http.name).toBe('POST /mcp/modes/:mode');
    const call = await receiver.span(childOf(mcp));
    expect(call.name).toBe('execute_tool testing_ping_pong');
  });

  it('does the same on the SDK path (a request the fast lane leaves to the SDK)', async () => {
    const traceId = '1af7651916cd43dd8448eb211c80319d';
    // A _meta key the fast lane does not know sends the request through the MCP SDK.
    const answer = await mcpCall(host.url, 42, {
      traceparent: `00-${traceId}-${META_SPAN}-01`,
      'com.example/note': 'through the SDK',
    });
    expect(answer.status).toBe(200);
    const mcp = await receiver.span((span) => span.traceId === traceId && span.name.startsWith('tools/call'));
    expect(mcp.parentSpanId).toBe(META_SPAN);
    expect(mcp.attributes['jsonrpc.request.id']).toBe('42');
    const call = await receiver.span(childOf(mcp));
    expect(call.name).toBe('execute_tool testing_ping_pong');
  });

  it('ignores a malformed traceparent header: the request is served and its span starts a trace of its own', async () => {
    for (const bad of [`00-${'0'.repeat(32)}-${CALLER_SPAN}-01`, 'zz-not-a-trace', `00-${TRACE_ID}-${CALLER_SPAN}`]) {
      const answer = await invoke(host.url, { traceparent: bad, 'x-request-id': `bad-${bad.length}` });
      expect(answer.status).toBe(200);
      const http = await receiver.span((span) => span.attributes['aptix.request.id'] === `bad-${bad.length}`);
      expect(http.parentSpanId).toBeUndefined();
      expect(http.traceId).not.toBe(TRACE_ID);
    }
  });

  it("ignores a huge _meta.traceparent: the call is served, its MCP span is the HTTP span's child", async () => {
    const huge = `00-${META_TRACE_ID}-${META_SPAN}-01${'-x'.repeat(100_000)}`;
    const answer = await mcpCall(host.url, 43, { traceparent: huge });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('pong: hello');
    const mcp = await receiver.span((span) => span.attributes['jsonrpc.request.id'] === '43');
    expect(mcp.traceId).not.toBe(META_TRACE_ID);
    const http = await receiver.span((span) => span.spanId === mcp.parentSpanId);
    expect(http.kind).toBe(2);
    expect(mcp.links).toEqual([]);
  });

  it('exports the tool-call duration histogram over OTLP, by tool and outcome', async () => {
    for (let i = 0; i < 2; i++) expect((await invoke(host.url)).status).toBe(200);
    const failed = await fetch(`${host.url}${INVOKE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ arguments: { message: '' } }),
    });
    expect(((await failed.json()) as { errors: Array<{ code: string }> }).errors[0]!.code).toBe('INVALID_ARGUMENTS');
    const deadline = Date.now() + 15_000;
    const latest = (outcome: string | undefined) =>
      receiver.points
        .filter(
          (point) =>
            point.metric === 'aptix.tool.call.duration' &&
            point.attributes['gen_ai.tool.name'] === 'testing_ping_pong' &&
            point.attributes['error.type'] === outcome,
        )
        .at(-1);
    while ((latest(undefined) === undefined || latest('INVALID_ARGUMENTS') === undefined) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(latest(undefined)!.count).toBeGreaterThanOrEqual(2);
    expect(latest('INVALID_ARGUMENTS')!.count).toBeGreaterThanOrEqual(1);
    const active = receiver.points.filter((point) => point.metric === 'aptix.tool.calls.active').at(-1);
    expect(active?.value).toBe(0);
  });

  it('spans an approval: asked, then decided, the approved call running inside the decision', async () => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` };
    const created = await fetch(`${host.url}/v1/sessions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ mode: 'tool_diagnostics' }),
    });
    const sessionId = ((await created.json()) as { id: string }).id;
    const asked = await fetch(`${host.url}/v1/tools/testing_issue_refund/invoke`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        arguments: { orderId: 'A-5000', amount: 5000, currency: 'EUR' },
        context: { sessionId },
      }),
    });
    expect(asked.status).toBe(202);
    const { approvalId } = (await asked.json()) as { approvalId: string };
    const ask = await receiver.span((span) => span.name === 'aptix.approval.ask');
    expect(ask.attributes).toMatchObject({
      'gen_ai.tool.name': 'testing_issue_refund',
      'aptix.approval.id': approvalId,
    });
    const pending = await fetch(`${host.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(await pending.text()).toMatch(/^aptix_approvals_pending\{[^}]*\} [1-9]/m);

    const decided = await fetch(`${host.url}/v1/approvals/${approvalId}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(decided.status).toBe(200);
    const decide = await receiver.span((span) => span.name === 'aptix.approval.decide');
    expect(decide.attributes).toMatchObject({
      'aptix.approval.id': approvalId,
      'aptix.approval.decision': 'approve',
      'aptix.approval.outcome': 'decided',
    });
    // Its children: the execution, and the store's writes (decide_approval, claim_approval).
    const execute = await receiver.span((span) => childOf(decide)(span) && span.name === 'aptix.approval.execute');
    expect(execute.attributes['aptix.approval.status']).toBe('executed');
    await receiver.span((span) => childOf(decide)(span) && span.name === 'decide_approval aptix_sessions');
    await receiver.span((span) => childOf(execute)(span) && span.name === 'execute_tool testing_issue_refund');
    // The ask and the execution are linked (the same host here; telemetry-approvals.test.ts: two hosts).
    expect(execute.links).toEqual([{ traceId: ask.traceId, spanId: ask.spanId }]);
  });

  it('serves /metrics in the Prometheus text format to an admin only', async () => {
    expect((await fetch(`${host.url}/metrics`)).status).toBe(401);
    const reader = await fetch(`${host.url}/metrics`, { headers: { authorization: `Bearer ${READER}` } });
    expect(reader.status).toBe(403);
    expect(await reader.text()).toContain('needs the permission admin');
    const admin = await fetch(`${host.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(admin.status).toBe(200);
    expect(admin.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await admin.text();
    expect(text).toMatch(/^aptix_tool_call_duration_count\{[^}]*gen_ai_tool_name="testing_ping_pong"[^}]*\} \d+/m);
    expect(text).toMatch(/^aptix_tool_calls_active\{[^}]*\} 0/m);
    expect(text).toMatch(/^aptix_mcp_sessions\{[^}]*\} \d+/m);
  });
});

describe('a host whose OTLP endpoint cannot be reached', () => {
  it('keeps serving, and shuts down without waiting out the exporters', async () => {
    const closedPort = await freePort();
    const { host, space } = await startHostWithConfig(telemetryFields(`http://127.0.0.1:${closedPort}`), FAST_EXPORT);
    try {
      for (let i = 0; i < 20; i++) expect((await invoke(host.url)).status).toBe(200);
      // Exports have been tried (and failed) meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect((await invoke(host.url)).status).toBe(200);
      expect(await host.stop()).toBe(0);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});

describe('the telemetry section of the configuration', () => {
  it('refuses an OTLP endpoint that is not an http(s) URL, naming the field, and a misspelt field with a guess', async () => {
    const space = scratch();
    try {
      const bad = join(space.dir, 'bad.json');
      writeFileSync(bad, JSON.stringify({ telemetry: { enabled: true, otlpEndpoint: 'collector:4318' } }));
      const refused = await runCli(['check', '--config', bad]);
      expect(refused.code).not.toBe(0);
      expect(refused.stdout + refused.stderr).toContain('telemetry.otlpEndpoint');
      const misspelt = join(space.dir, 'misspelt.json');
      writeFileSync(misspelt, JSON.stringify({ telemetry: { enabled: true, otlpEndpiont: 'http://127.0.0.1:4318' } }));
      const guessed = await runCli(['check', '--config', misspelt]);
      expect(guessed.code).not.toBe(0);
      expect(guessed.stdout + guessed.stderr).toContain('did you mean "otlpEndpoint"?');
    } finally {
      space.cleanup();
    }
  });
});
