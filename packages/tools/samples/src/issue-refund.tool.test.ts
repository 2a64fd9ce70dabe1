import { describe, expect, it } from 'vitest';
import { evaluateApprovalPolicy } from '@aptix/tool-contract';
import { testContext } from '@aptix/tool-contract/testing';
import { errorOf, harness, payloadOf, VIAS } from '../test/harness.js';
import { IssueRefundTool, REFUND_APPROVAL_THRESHOLD } from './issue-refund.tool.js';

describe('testing_issue_refund: its approval policy', () => {
  const policy = (amount: number) =>
    evaluateApprovalPolicy(
      IssueRefundTool.ToolName,
      IssueRefundTool.ApprovalPolicy,
      { orderId: 'A-1', amount, currency: 'EUR' },
      {},
    );

  it('lets a refund up to the threshold run without a person', () => {
    expect(policy(REFUND_APPROVAL_THRESHOLD)).toEqual({ required: false, reason: '' });
    expect(policy(0.01).required).toBe(false);
  });

  it('asks a person for anything over the threshold, saying why', () => {
    expect(policy(REFUND_APPROVAL_THRESHOLD + 0.01)).toEqual({
      required: true,
      reason: "A refund of 100.01 EUR is over 100 EUR, the most that is refunded without a person's approval.",
    });
    expect(policy(5000).required).toBe(true);
  });

  it('is reported as dynamic by the registry', () => {
    expect(harness(IssueRefundTool).registry.get('testing_issue_refund')!.approval).toBe('dynamic');
  });
});

describe.each(VIAS)('testing_issue_refund, called %s', (via) => {
  it('records the refund, logs one line per refund for operators to count, and echoes the ids', async () => {
    const h = harness(IssueRefundTool);
    const payload = payloadOf(
      await h.call(via, '{"orderId":"A-1001","amount":25,"currency":"EUR"}', {
        context: testContext({ sessionId: 's-1', conversationId: 'c-1' }),
      }),
    );
    expect(payload).toMatchObject({
      orderId: 'A-1001',
      amount: 25,
      currency: 'EUR',
      status: 'refunded',
      sessionId: 's-1',
      conversationId: 'c-1',
    });
    expect(payload.refundId).toMatch(/^rf_A-1001_/);
    expect(h.logger.entries.filter((entry) => entry.tag === '[testing_issue_refund_Refunded]')).toHaveLength(1);
  });

  it.each([
    ['a zero amount', '{"orderId":"A-1","amount":0,"currency":"EUR"}', "'amount'"],
    ['an unknown currency', '{"orderId":"A-1","amount":5,"currency":"BTC"}', "'currency'"],
    ['an order id with spaces', '{"orderId":"A 1","amount":5,"currency":"EUR"}', "'orderId'"],
    ['a missing order id', '{"amount":5,"currency":"EUR"}', "'orderId' is required"],
  ])('refuses %s with INVALID_ARGUMENTS naming the field, and refunds nothing', async (_case, args, field) => {
    const h = harness(IssueRefundTool);
    const error = errorOf(await h.call(via, args));
    expect(error.code).toBe('INVALID_ARGUMENTS');
    expect(error.message).toContain(field);
    expect(h.logger.entries.filter((entry) => entry.tag === '[testing_issue_refund_Refunded]')).toHaveLength(0);
  });
});
