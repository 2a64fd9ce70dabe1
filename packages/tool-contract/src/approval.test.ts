import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { APPROVAL_META_KEY, evaluateApprovalPolicy } from './approval.js';
import { ContractErrorCode, ToolContractError } from './errors.js';
import { functionToolSchema } from './schema.js';
import { AgentToolRegistry } from './tool-registry.js';

const Args = Type.Object({ amount: Type.Number({ description: 'Amount in euros.' }) }, { additionalProperties: false });

function gatedTool(name: string, policy: unknown) {
  const Tool = class GatedTool {
    static readonly ToolName: string = name;
    static readonly ToolUsageMetadata: string = 'Use it in tests.';
    static getSchema() {
      return functionToolSchema(name, 'A gated tool.', Args);
    }
    readonly name = name;
    readonly isToolFullyExecutedOnServer = true;
    async execute() {
      return { successful: true as const, result: '{}', errors: [] };
    }
  };
  if (policy !== undefined) Object.defineProperty(Tool, 'ApprovalPolicy', { value: policy });
  return Tool;
}

function register(policy: unknown) {
  const registry = new AgentToolRegistry();
  return { registry, tool: registry.registerTool(gatedTool('test_gated', policy) as never) };
}

describe('approval policies in the contract', () => {
  it('reports each kind of policy in listings and MCP definitions, and leaves ungated tools unchanged', () => {
    expect(register(undefined).tool.approval).toBe('never');
    expect(register('always').tool.approval).toBe('always');
    const { registry, tool } = register(({ amount }: { amount: number }) => amount > 100);
    expect(tool.approval).toBe('dynamic');
    expect(registry.list()[0]!.approval).toBe('dynamic');
    expect(registry.definitions('mcp')[0]!._meta).toEqual({ [APPROVAL_META_KEY]: 'dynamic' });
    expect(register(undefined).registry.definitions('mcp')[0]).not.toHaveProperty('_meta');
    expect(register('never').registry.definitions('mcp')[0]).not.toHaveProperty('_meta');
  });

  it.each([['sometimes'], [true], [42], [{ required: true }]])(
    'refuses the declaration %j with a message saying what a policy is',
    (policy) => {
      let error: unknown;
      try {
        register(policy);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(ToolContractError);
      expect((error as ToolContractError).code).toBe(ContractErrorCode.APPROVAL_POLICY_INVALID);
      expect((error as ToolContractError).message).toContain("ApprovalPolicy must be 'always', 'never' or a function");
    },
  );

  it('refuses a policy function that expects more than (args, context)', () => {
    expect(() => register((_a: unknown, _b: unknown, _c: unknown) => true)).toThrow(
      /ApprovalPolicy takes 3 parameters/,
    );
  });
});

describe('evaluateApprovalPolicy', () => {
  const threshold = ({ amount }: { amount: number }) =>
    amount > 100 ? { required: true, reason: `A refund of ${amount} needs approval.` } : false;

  it('follows a dynamic policy on both sides of its threshold', () => {
    expect(evaluateApprovalPolicy('t', threshold, { amount: 5 }, {})).toEqual({ required: false, reason: '' });
    expect(evaluateApprovalPolicy('t', threshold, { amount: 5000 }, {})).toEqual({
      required: true,
      reason: 'A refund of 5000 needs approval.',
    });
  });

  it('gives static policies and boolean answers a reason', () => {
    expect(evaluateApprovalPolicy('t', 'always', {}, {})).toEqual({
      required: true,
      reason: "t always needs a person's approval.",
    });
    expect(evaluateApprovalPolicy('t', 'never', {}, {}).required).toBe(false);
    expect(evaluateApprovalPolicy('t', undefined, {}, {}).required).toBe(false);
    expect(evaluateApprovalPolicy('t', () => true, {}, {}).reason).toBe(
      "t needs a person's approval for these arguments.",
    );
  });

  it('fails closed: a policy that throws or answers nonsense requires approval', () => {
    const throwing = () => {
      throw new Error('boom');
    };
    expect(evaluateApprovalPolicy('t', throwing, {}, {})).toEqual({
      required: true,
      reason: "t's approval policy failed on these arguments, so a person must decide.",
    });
    expect(evaluateApprovalPolicy('t', (() => 'yes') as never, {}, {}).required).toBe(true);
    expect(evaluateApprovalPolicy('t', (() => null) as never, {}, {}).required).toBe(true);
    // Not a policy at all (the registry refuses these; a caller of this function may not have asked it).
    for (const notAPolicy of ['sometimes', 'Never', 0, null, {}])
      expect(evaluateApprovalPolicy('t', notAPolicy as never, {}, {}).required).toBe(true);
  });

  it('passes the context to the policy', () => {
    const byUser = (_args: unknown, context: { user?: string }) => context.user !== 'admin';
    expect(evaluateApprovalPolicy('t', byUser, {}, { user: 'admin' }).required).toBe(false);
    expect(evaluateApprovalPolicy('t', byUser, {}, { user: 'guest' }).required).toBe(true);
  });
});
