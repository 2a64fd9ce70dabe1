import { Type, type Static } from 'typebox';
import {
  functionToolSchema,
  TypedAgentTool,
  usage,
  type AdminLogger,
  type AgentToolExecutionContext,
  type ApprovalPolicy,
  type ToolDependencies,
} from '@aptix/tool-contract';

const Args = Type.Object(
  {
    orderId: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'The order to refund, as the user gave it (letters, digits, - and _).',
    }),
    amount: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1_000_000,
      description: 'The amount to refund, in the currency given; more than 0.',
    }),
    currency: Type.Enum(['EUR', 'USD', 'GBP'], {
      type: 'string',
      description: 'The currency of the amount: EUR, USD or GBP.',
    }),
  },
  { additionalProperties: false },
);

/** Refunds up to this amount need no approval; above it a person must say yes first. */
export const REFUND_APPROVAL_THRESHOLD = 100;

/**
 * The reference tool of approval gates: a call with side effects whose need for a person's approval
 * depends on its arguments. It records the refund it is asked for (in its result and in the log, where
 * hosts count executions); no payment system stands behind it.
 */
export class IssueRefundTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'testing_issue_refund';
  static readonly ToolUsageMetadata = usage`
    testing_issue_refund — Usage Guide

    Primary purpose:
    - Record a refund of an order when the user asks for their money back. It shows how Aptix gates a call on a person's approval.

    Rules:
    - Refunds of ${REFUND_APPROVAL_THRESHOLD} or less run at once. Larger ones wait until a person approves them: the call then answers that it awaits approval, with an approval id. Tell the user so; do not call again for the same refund.
    - If the person declines, the result says so, with their note: tell the user, and do not retry the same refund.
    - Never split a refund into smaller ones to stay under the threshold.

    Arguments:
    - orderId (required): the order's id, letters, digits, - and _.
    - amount (required): how much to refund, more than 0.
    - currency (required): "EUR", "USD" or "GBP".

    Error codes:
    - INVALID_ARGUMENTS: an argument is missing, of the wrong type, or out of range.
    - APPROVAL_DENIED: a person declined the refund; nothing was refunded.
    - APPROVAL_EXPIRED: nobody decided in time; nothing was refunded. Ask the user whether to request it again.
    - TIMEOUT: the call did not finish in time.
    - TOOL_EXCEPTION: the tool failed unexpectedly.
    - A successful result with "wasCancelled": true: the caller cancelled the call before it ran; nothing was refunded.

    Good usage:
    - { "orderId": "A-1001", "amount": 25, "currency": "EUR" } → refunded at once: { "refundId": "…", "status": "refunded" }
    - { "orderId": "A-1002", "amount": 5000, "currency": "USD" } → awaits a person's approval

    Bad usage:
    - { "orderId": "A-1002", "amount": 100, "currency": "USD" } fifty times for one refund of 5000: never split refunds.
  `;
  static readonly ApprovalPolicy: ApprovalPolicy<Static<typeof Args>> = ({ amount, currency }) =>
    amount > REFUND_APPROVAL_THRESHOLD
      ? {
          required: true,
          reason: `A refund of ${amount} ${currency} is over ${REFUND_APPROVAL_THRESHOLD} ${currency}, the most that is refunded without a person's approval.`,
        }
      : false;
  static readonly ToolAnnotations = {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: true,
  };

  static getSchema() {
    return functionToolSchema(
      IssueRefundTool.ToolName,
      `Refunds an order. Refunds over ${REFUND_APPROVAL_THRESHOLD} wait for a person's approval.`,
      Args,
    );
  }

  readonly #logger: AdminLogger;

  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
    this.#logger = logger;
  }

  protected run({ orderId, amount, currency }: Static<typeof Args>, context: AgentToolExecutionContext) {
    const refundId = `rf_${orderId}_${Date.now().toString(36)}`;
    // One line per refund issued: what an operator (and the exactly-once tests) count.
    this.#logger.addCustomEvent(
      'info',
      '[testing_issue_refund_Refunded]',
      `Refunded ${amount} ${currency} for order ${orderId}.`,
      [
        ['RefundId', refundId],
        ['OrderId', orderId],
        ['Amount', `${amount} ${currency}`],
        ['SessionId', context.sessionId ?? ''],
      ],
    );
    return {
      refundId,
      orderId,
      amount,
      currency,
      status: 'refunded',
      sessionId: context.sessionId ?? null,
      conversationId: context.conversationId ?? null,
    };
  }
}
