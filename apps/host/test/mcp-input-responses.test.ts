/**
 * The answers of a 2026-07-28 retry (`inputResponses`) under an own "__proto__" key, sent over real
 * HTTP to a real `aptix serve`. The SDK copies the answers key by key, so such a key became the
 * prototype of the answers and everything under it read as answered: an approval retry with
 * {"__proto__": {"approval": {"action": "accept", …}}} approved and ran the call. Refused now (-32602,
 * naming the key), with nothing decided or run, for an approval and for a tool's own questions.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_ROOT, rawToolsCall, startHostWithConfig, type RunningHost } from './support.js';

const KEY = 'ops-key-0123456789abcdef';
const auth = { authorization: `Bearer ${KEY}` };
const REFUNDED = '[testing_issue_refund_Refunded]';
const ASKING = join(HOST_ROOT, 'test', 'fixtures', 'asking-tools');
/** Parsed from text, so "__proto__" is an own key, as a client's JSON brings it (an object literal would set the prototype instead). */
const underProto = (answers: object) =>
  JSON.parse(`{"__proto__":${JSON.stringify(answers)}}`) as Record<string, unknown>;

/** One raw 2026-07-28 tools/call at a mode's URL, from a client that declares form elicitation. */
const rawCall = (url: string, mode: string, params: Record<string, unknown>) =>
  rawToolsCall(url, params, { path: `/mcp/modes/${mode}`, key: KEY });

describe('inputResponses with an own "__proto__" key', () => {
  let host: RunningHost;
  let cleanup: () => void;

  beforeAll(async () => {
    const started = await startHostWithConfig(
      // allowSelfApproval: the key that asked is asked about its own refund (and may decide it), so the round trip happens.
      {
        toolPackages: ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change', ASKING],
        modes: { extend: { general: ['ask_name_and_colour'] } },
        approvals: { allowSelfApproval: ['testing_issue_refund'] },
      },
      { APTIX_API_KEYS: `ops=${KEY}` },
    );
    host = started.host;
    cleanup = started.space.cleanup;
  });
  afterAll(async () => {
    await host?.stop();
    cleanup?.();
  });

  it('an approval retry whose approve answer sits under "__proto__" is refused; the approval stays pending and nothing runs until the answer comes plainly', async () => {
    const args = { orderId: 'PROTO-1', amount: 5000, currency: 'EUR' };
    const first = await rawCall(host.url, 'tool_diagnostics', { name: 'testing_issue_refund', arguments: args });
    expect(first.result.resultType).toBe('input_required');
    const { requestState } = first.result;
    const approvalId = first.result._meta['aptix/approval'].approvalId as string;
    const retry = await rawCall(host.url, 'tool_diagnostics', {
      name: 'testing_issue_refund',
      arguments: args,
      requestState,
      inputResponses: underProto({ approval: { action: 'accept', content: { decision: 'approve' } } }),
    });
    expect(retry.result).toBeUndefined();
    expect(retry.error?.code).toBe(-32602);
    expect(retry.error?.message).toMatch(
      /^Invalid inputResponses: they hold a "__proto__" key .*nothing was decided or run\. Send each answer under the key of its input request \(for an approval: "approval"\)/,
    );
    const stored = await (await fetch(`${host.url}/v1/approvals/${approvalId}`, { headers: auth })).json();
    expect(stored).toMatchObject({ status: 'pending', decidedBy: null });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(host.logs.filter((line) => line.tag === REFUNDED)).toHaveLength(0);
    // The same answer sent plainly, with the same state, decides it: the refusal was the key's alone.
    const plain = await rawCall(host.url, 'tool_diagnostics', {
      name: 'testing_issue_refund',
      arguments: args,
      requestState,
      inputResponses: { approval: { action: 'accept', content: { decision: 'approve' } } },
    });
    expect(plain.result._meta['aptix/approval']).toMatchObject({ status: 'executed', approvalId });
  });

  it('a tool\'s own question answered under "__proto__" is refused before the tool reads it; the same answer sent plainly is taken', async () => {
    const first = await rawCall(host.url, 'general', { name: 'ask_name_and_colour', arguments: {} });
    expect(first.result.resultType).toBe('input_required');
    const { requestState } = first.result;
    const answer = { name: { action: 'accept', content: { name: 'Mallory' } } };
    const smuggled = await rawCall(host.url, 'general', {
      name: 'ask_name_and_colour',
      arguments: {},
      requestState,
      inputResponses: underProto(answer),
    });
    expect(smuggled.error?.code).toBe(-32602);
    expect(smuggled.error?.message).toContain('"__proto__"');
    const plain = await rawCall(host.url, 'general', {
      name: 'ask_name_and_colour',
      arguments: {},
      requestState,
      inputResponses: answer,
    });
    expect(plain.result.resultType).toBe('input_required');
    expect(Object.keys(plain.result.inputRequests)).toEqual(['colour']);
  });

  it('a "__proto__" key deeper in an answer is refused too', async () => {
    const first = await rawCall(host.url, 'general', { name: 'ask_name_and_colour', arguments: {} });
    const nested = { name: JSON.parse('{"action":"accept","content":{"__proto__":{"name":"Mallory"}}}') };
    const retry = await rawCall(host.url, 'general', {
      name: 'ask_name_and_colour',
      arguments: {},
      requestState: first.result.requestState,
      inputResponses: nested,
    });
    expect(retry.error?.code).toBe(-32602);
  });
});
