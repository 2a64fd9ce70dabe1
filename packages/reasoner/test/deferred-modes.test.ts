import { decodeArguments, evaluateApprovalPolicy, type AgentToolExecutionContext } from '@aptix/tool-contract';
import { afterEach, describe, expect, it } from 'vitest';
import { createReasoner, ReasonerError, ReasonerErrorCode, type TurnApprovals } from '../src/index.js';
import { call, respond } from '../src/testing/index.js';
import { createHarness, eventLog, guidanceNames, testModes, type Harness } from './support/harness.js';

const META = ['aptix_find_tools', 'aptix_call_tool', 'agent_list_modes', 'agent_change_mode'];

/** The harness's modes, with the sample refund tool (gated over 100) in general; general and diagnostics deferred. */
async function deferredHarness(): Promise<Harness> {
  const modes = testModes().map((mode) =>
    mode.key === 'general' ? { ...mode, tools: [...mode.tools, 'testing_issue_refund'] } : mode,
  );
  return createHarness({ modes, reasoner: { deferred: ['general', 'diagnostics'] } });
}

/** What the model read back for each call of a request, by call id. */
function outputsRead(h: Harness, request: number): Record<string, unknown> {
  const items = h.server.requests[request]!.body.input.filter((item) => item.type === 'function_call_output');
  return Object.fromEntries(items.map((item) => [item.call_id as string, JSON.parse(item.output as string)]));
}

let h: Harness;
afterEach(async () => {
  await h.close();
});

describe('a deferred mode', () => {
  it('offers aptix_find_tools and aptix_call_tool instead of its tools; the model finds a tool, calls it, and reads its result', async () => {
    h = await deferredHarness();
    const session = await h.store.createSession({ user: 'ada' });
    h.server.script(
      respond(
        undefined,
        call('c_find', 'aptix_find_tools', { query: 'multiply two numbers', sessionId: null, limit: 3 }),
      ),
      respond(
        undefined,
        call('c_call', 'aptix_call_tool', {
          name: 'testing_calculator',
          arguments: { operation: 'multiply', a: 6, b: 7 },
        }),
      ),
      respond('42'),
    );

    const result = await h.reasoner.runTurn(session.id, 'What is 6 times 7?');

    expect(result).toMatchObject({ status: 'completed', output: '42', mode: 'general' });
    const first = h.server.requests[0]!.body;
    expect(first.tools.map((tool) => tool.name)).toEqual(META);
    expect(first.tools.find((tool) => tool.name === 'aptix_call_tool')!.strict).toBe(false);
    // No per-tool guides but the mode tools', and a word on finding the others.
    expect(guidanceNames(first.instructions)).toEqual(['agent_list_modes', 'agent_change_mode']);
    expect(first.instructions).toContain('# Finding tools\nThis mode offers 4 tools that are not listed to you.');
    expect(first.instructions).not.toContain(h.registry.get('testing_calculator')!.usageMetadata);

    const found = outputsRead(h, 1).c_find as {
      mode: string;
      sessionId: string;
      total: number;
      tools: Array<{ name: string; usage: string; parameters: unknown }>;
      next: string;
    };
    expect(found).toMatchObject({ mode: 'general', sessionId: session.id, total: 6 });
    expect(found.tools[0]).toEqual({
      name: 'testing_calculator',
      description: h.registry.get('testing_calculator')!.description,
      parameters: h.registry.get('testing_calculator')!.parameters,
      usage: h.registry.get('testing_calculator')!.usageMetadata,
    });
    expect(found.next).toContain('aptix_call_tool {"name": "<tool>", "arguments": {…}}');
    expect(outputsRead(h, 2).c_call).toEqual({
      value: 42,
      expression: '6 * 7 = 42',
      sessionId: session.id,
      conversationId: session.id,
    });
    expect(result.toolCalls.map(({ name, successful }) => [name, successful])).toEqual([
      ['aptix_find_tools', true],
      ['aptix_call_tool', true],
    ]);
  });

  it('answers invalid arguments, of the call tool or of the tool it names, with a failed result naming the field', async () => {
    h = await deferredHarness();
    const session = await h.store.createSession({});
    h.server.script(
      respond(
        undefined,
        call('c_inner', 'aptix_call_tool', {
          name: 'testing_calculator',
          arguments: { operation: 'multiply', a: 'six', b: 7 },
        }),
        call('c_noname', 'aptix_call_tool', { arguments: { a: 1 } }),
        call('c_limit', 'aptix_find_tools', { query: 'add', limit: 500 }),
        call('c_text', 'aptix_call_tool', '{"name": "testing_calculator", '),
        call('c_other', 'aptix_call_tool', {
          name: 'testing_calculator',
          arguments: { operation: 'add', a: 1, b: 2 },
          sessionId: 'someone-else',
        }),
      ),
      respond('Sorry.'),
    );

    const result = await h.reasoner.runTurn(session.id, 'six times seven');

    expect(result.status).toBe('completed');
    const read = outputsRead(h, 1) as Record<string, { error: { code: string; message: string } }>;
    expect(read.c_inner!.error.code).toBe('INVALID_ARGUMENTS');
    expect(read.c_inner!.error.message).toContain("'a'");
    expect(read.c_noname!.error).toMatchObject({
      code: 'INVALID_ARGUMENTS',
      message: expect.stringMatching(/aptix_call_tool.*'name'/),
    });
    expect(read.c_limit!.error).toMatchObject({ code: 'INVALID_ARGUMENTS', message: expect.stringContaining('limit') });
    expect(read.c_text!.error.code).toBe('INVALID_ARGUMENTS');
    // Never a switch to another session: the call is refused, and says how to call.
    expect(read.c_other!.error).toEqual({
      code: 'SESSION_MISMATCH',
      message: expect.stringContaining(
        `names session "someone-else", but this conversation works in session ${session.id}. Leave sessionId out`,
      ),
    });
    expect(result.toolCalls.every((toolCall) => !toolCall.successful)).toBe(true);
  });

  it('refuses a tool the mode does not offer, saying what to do; after agent_change_mode through the call tool, the next find sees the new mode', async () => {
    h = await deferredHarness();
    const session = await h.store.createSession({});
    h.server.script(
      respond(
        undefined,
        call('c_early', 'aptix_call_tool', { name: 'testing_ping_pong', arguments: { message: 'hi' } }),
      ),
      respond(
        undefined,
        call('c_mode', 'aptix_call_tool', {
          name: 'agent_change_mode',
          arguments: { mode: 'diagnostics', branch: false, reason: 'The user wants to test the tools.' },
        }),
      ),
      respond(undefined, call('c_find', 'aptix_find_tools', { query: 'ping', sessionId: session.id, limit: null })),
      respond(
        undefined,
        call('c_ping', 'aptix_call_tool', {
          name: 'testing_ping_pong',
          arguments: { message: 'hi', count: 2 },
          sessionId: session.id,
        }),
      ),
      respond('pong pong: hi'),
    );
    const log = eventLog();

    const result = await h.reasoner.runTurn(session.id, 'Switch to diagnostics and ping.', { onEvent: log.onEvent });

    expect(outputsRead(h, 1).c_early).toEqual({
      error: {
        code: 'TOOL_NOT_OFFERED',
        message:
          `Tool "testing_ping_pong" is not offered in mode "general" (session ${session.id}); it was ` +
          `not run. Find this mode's tools with aptix_find_tools. "testing_ping_pong" is offered in ` +
          `mode "diagnostics": switch with agent_change_mode once the user agrees, then call it again.`,
      },
    });
    expect(log.events.filter((event) => event.type === 'mode_changed')).toEqual([
      { type: 'mode_changed', sessionId: session.id, fromMode: 'general', toMode: 'diagnostics', branch: false },
    ]);
    expect(h.server.requests[2]!.body.instructions).toContain('# Current mode: Diagnostics (diagnostics)');
    expect(outputsRead(h, 3).c_find).toMatchObject({
      mode: 'diagnostics',
      total: 5,
      tools: [expect.objectContaining({ name: 'testing_ping_pong' })],
    });
    expect(outputsRead(h, 4).c_ping).toMatchObject({ reply: 'pong pong: hi', sessionId: session.id });
    expect(result).toMatchObject({ status: 'completed', mode: 'diagnostics' });
    expect((await h.store.getSession(session.id))!.mode).toBe('diagnostics');
  });

  it('follows a branch asked through the call tool into the child session', async () => {
    h = await deferredHarness();
    const parent = await h.store.createSession({});
    h.server.script(
      respond(
        undefined,
        call('c_branch', 'aptix_call_tool', {
          name: 'agent_change_mode',
          arguments: { mode: 'diagnostics', branch: true, reason: 'Diagnostics in a session of their own.' },
        }),
      ),
      respond('Moved.'),
    );

    const result = await h.reasoner.runTurn(parent.id, 'Option 3.');

    expect(result.branchedSessionId).toEqual(expect.any(String));
    expect(result.mode).toBe('diagnostics');
    expect(outputsRead(h, 1).c_branch).toMatchObject({ branch: true, branchedSessionId: result.branchedSessionId });
  });

  it('pauses a gated call made through the call tool for approval, as a direct one, and runs it once approved', async () => {
    h = await deferredHarness();
    const session = await h.store.createSession({});
    const approvals = policyApprovals(h);
    h.server.script(
      respond(
        undefined,
        call('c_refund', 'aptix_call_tool', {
          name: 'testing_issue_refund',
          arguments: { orderId: 'A-1', amount: 500, currency: 'EUR' },
        }),
      ),
      respond('Refunded.'),
    );

    const paused = await h.reasoner.runTurn(session.id, 'Refund 500 EUR on order A-1.', { approvals });

    expect(paused).toMatchObject({
      status: 'waiting_for_approval',
      pendingToolCalls: [{ callId: 'c_refund', name: 'aptix_call_tool' }],
    });
    expect(approvals.asked).toEqual([
      { name: 'testing_issue_refund', arguments: { orderId: 'A-1', amount: 500, currency: 'EUR' }, mode: 'general' },
    ]);
    expect(h.server.requests).toHaveLength(1); // nothing ran: the turn waits for a person
    await approvals.approve(paused.pendingToolCalls[0]!.serverResult);

    const resumed = await h.reasoner.resumeApprovals(session.id, { approvals });

    expect(resumed).toMatchObject({ status: 'completed', output: 'Refunded.' });
    expect(outputsRead(h, 1).c_refund).toMatchObject({ orderId: 'A-1', amount: 500, currency: 'EUR' });
  });

  it('keeps listing the modes it does not defer, and refuses the meta tools there', async () => {
    h = await deferredHarness();
    const session = await h.store.createSession({ mode: 'workspace' });
    h.server.script(respond(undefined, call('c_find', 'aptix_find_tools', { query: 'edit' })), respond('ok'));

    await h.reasoner.runTurn(session.id, 'find something');

    expect(h.reasoner.promptFor('workspace')).toMatchObject({
      deferred: false,
      toolNames: ['workspace_apply_edit', 'agent_list_modes', 'agent_change_mode'],
    });
    expect(h.server.requests[0]!.body.tools.map((tool) => tool.name)).toEqual([
      'workspace_apply_edit',
      'agent_list_modes',
      'agent_change_mode',
    ]);
    expect(outputsRead(h, 1).c_find).toMatchObject({
      error: {
        code: 'TOOL_NOT_OFFERED',
        message: expect.stringContaining("this mode's tools are listed to you directly (workspace_apply_edit"),
      },
    });
  });

  it('refuses a deferred option naming a mode the catalog does not have, at start-up', async () => {
    h = await createHarness();
    let error: unknown;
    try {
      createReasoner({ ...h.options, deferred: ['general', 'genral'] });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ReasonerError);
    expect(error).toMatchObject({
      code: ReasonerErrorCode.INVALID_OPTION,
      message: expect.stringContaining('"genral"'),
    });
  });
});

/**
 * The host's side of approval gates, reduced to what a turn needs: each tool's own ApprovalPolicy
 * decides, an approved call runs through the harness's executor, and its result is the outcome.
 */
function policyApprovals(h: Harness): TurnApprovals & { asked: unknown[]; approve(record: string): Promise<void> } {
  const waiting = new Map<string, { name: string; argumentsJson: string; context: AgentToolExecutionContext }>();
  const decided = new Map<
    string,
    { successful: true; output: unknown } | { successful: false; error: { message: string; code?: string } }
  >();
  const asked: unknown[] = [];
  return {
    asked,
    async gate(name, argumentsJson, context) {
      asked.push({ name, arguments: JSON.parse(argumentsJson), mode: context.mode });
      const tool = h.registry.get(name)!;
      const decoded = decodeArguments(name, tool.parameters, argumentsJson);
      if (!decoded.ok || !evaluateApprovalPolicy(name, tool.approvalPolicy, decoded.value, context).required)
        return { gated: false };
      const approvalId = `approval-${waiting.size + 1}`;
      waiting.set(approvalId, { name, argumentsJson, context });
      return { gated: true, approvalId, message: `${name} waits for approval ${approvalId}.` };
    },
    async outcome(approvalId) {
      return decided.get(approvalId);
    },
    async approve(record) {
      const approvalId = (JSON.parse(record) as { aptix_approval_id: string }).aptix_approval_id;
      const { name, argumentsJson, context } = waiting.get(approvalId)!;
      const result = await h.executor.execute(name, argumentsJson, context);
      decided.set(
        approvalId,
        result.successful
          ? { successful: true, output: result.result }
          : { successful: false, error: result.errors[0]! },
      );
    },
  };
}
