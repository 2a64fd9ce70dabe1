/**
 * The agent loop and approval gates, through real `aptix serve` processes against the scripted
 * Responses server: a turn whose model calls a gated tool pauses, survives a host restart, and resumes
 * once the call is decided. The model reads the result, or that the person declined, with their note.
 */
import { describe, expect, it } from 'vitest';
import { call, respond, type ScriptedResponsesServer } from '@aptix/reasoner/testing';
import { hostWithScriptedModel, postJson as post } from './suites.js';

/** The function_call_output the model was sent for a call id, in the last request that carried it. */
function outputFor(model: ScriptedResponsesServer, callId: string): string | undefined {
  for (const request of [...model.requests].reverse()) {
    const item = request.body.input.find((entry) => entry.type === 'function_call_output' && entry.call_id === callId);
    if (item) return String(item.output);
  }
  return undefined;
}

describe('a turn that waits for a person', () => {
  const suite = hostWithScriptedModel();

  it('pauses on a gated call, runs nothing, survives a restart, and resumes with the result once approved', async () => {
    const { model } = suite;
    let host = suite.host;
    const { id } = (await post(host, '/v1/sessions', { mode: 'tool_diagnostics' })).body;
    model.script(
      respond(
        undefined,
        call('call_refund', 'testing_issue_refund', { orderId: 'T-1', amount: 2500, currency: 'EUR' }),
      ),
    );
    const before = model.requests.length;
    const paused = await post(host, `/v1/sessions/${id}/messages`, { input: 'Refund order T-1, 2500 EUR.' });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      status: 'waiting_for_approval',
      pendingToolCalls: [{ callId: 'call_refund', name: 'testing_issue_refund' }],
    });
    const [approvalId] = paused.body.pendingApprovals as string[];
    expect(approvalId).toBeDefined();
    expect(model.requests.length).toBe(before + 1);
    expect(host.logs.filter((line) => line.tag === '[testing_issue_refund_Refunded]')).toHaveLength(0);

    // Undecided: resuming changes nothing and asks no model.
    const early = await post(host, `/v1/sessions/${id}/resume`);
    expect(early.body).toMatchObject({ status: 'waiting_for_approval', pendingApprovals: [approvalId] });
    expect(model.requests.length).toBe(before + 1);
    // A client cannot answer the call in the person's place.
    const forged = await post(host, `/v1/sessions/${id}/tool-outputs`, {
      outputs: [{ callId: 'call_refund', output: { refundId: 'fake' } }],
    });
    expect(forged.status).toBe(400);
    expect(forged.body.error.message).toContain(`decide approval ${approvalId}`);

    expect((await post(host, `/v1/approvals/${approvalId}`, { decision: 'approve' })).body).toMatchObject({
      status: 'executed',
    });
    // The host stops between the decision and the resume; another takes over on the same database.
    host = await suite.restart();

    model.script(respond('The refund of 2500 EUR for T-1 is done.'));
    const resumed = await post(host, `/v1/sessions/${id}/resume`);
    expect(resumed.body).toMatchObject({ status: 'completed', output: 'The refund of 2500 EUR for T-1 is done.' });
    expect(JSON.parse(outputFor(model, 'call_refund')!)).toMatchObject({
      orderId: 'T-1',
      amount: 2500,
      status: 'refunded',
    });
    // Nothing waits any more.
    expect((await post(host, `/v1/sessions/${id}/resume`)).status).toBe(400);
  });

  it('tells the model that the person declined, with their note, not that the call failed for a technical reason', async () => {
    const { host, model } = suite;
    const { id } = (await post(host, '/v1/sessions', { mode: 'tool_diagnostics' })).body;
    model.script(
      respond(undefined, call('call_big', 'testing_issue_refund', { orderId: 'T-2', amount: 9000, currency: 'USD' })),
    );
    const paused = await post(host, `/v1/sessions/${id}/messages`, { input: 'Refund T-2.' });
    const [approvalId] = paused.body.pendingApprovals as string[];
    await post(host, `/v1/approvals/${approvalId}`, { decision: 'deny', note: 'Customer already got a voucher.' });
    model.script(respond('The refund was declined.'));
    const resumed = await post(host, `/v1/sessions/${id}/resume`);
    expect(resumed.body).toMatchObject({ status: 'completed' });
    const output = JSON.parse(outputFor(model, 'call_big')!);
    expect(output.error.code).toBe('APPROVAL_DENIED');
    expect(output.error.message).toContain('declined it, so it did not run');
    expect(output.error.message).toContain('Customer already got a voucher.');
    expect(host.logs.filter((line) => line.tag === '[testing_issue_refund_Refunded]')).toHaveLength(0);
  });

  it('runs a call under the threshold at once, in the same turn', async () => {
    const { host, model } = suite;
    const { id } = (await post(host, '/v1/sessions', { mode: 'tool_diagnostics' })).body;
    model.script(
      respond(undefined, call('call_small', 'testing_issue_refund', { orderId: 'T-3', amount: 20, currency: 'GBP' })),
      respond('Done: 20 GBP refunded.'),
    );
    const turn = await post(host, `/v1/sessions/${id}/messages`, { input: 'Refund T-3, 20 GBP.' });
    expect(turn.body).toMatchObject({
      status: 'completed',
      toolCalls: [{ name: 'testing_issue_refund', successful: true }],
    });
  });
});
