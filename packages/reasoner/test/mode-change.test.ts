import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReasoner, toMessageResponse } from '../src/index.js';
import { createHarness, eventLog, guidanceNames, guidanceOf, type Harness } from './support/harness.js';
import { call, respond } from '../src/testing/index.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

const GENERAL_TOOLS = [
  'agent_hello_world',
  'testing_calculator',
  'testing_failure_injection',
  'agent_list_modes',
  'agent_change_mode',
];
const DIAGNOSTICS_TOOLS = [
  'testing_ping_pong',
  'testing_delay',
  'testing_calculator',
  'agent_list_modes',
  'agent_change_mode',
];

describe('a mode change inside a turn', () => {
  it("gives the very next model call the new mode's instructions and tools", async () => {
    const session = await h.store.createSession({ org: 'acme', user: 'ada' });
    h.server.script(
      respond(
        'Switching.',
        call('c_mode', 'agent_change_mode', {
          mode: 'diagnostics',
          branch: false,
          reason: 'The user wants to test the tools.',
        }),
      ),
      respond(undefined, call('c_ping', 'testing_ping_pong', { message: 'hi', count: null })),
      respond('pong: hi'),
    );
    const log = eventLog();

    const result = await h.reasoner.runTurn(session.id, 'Yes, switch this session to diagnostics and ping.', {
      onEvent: log.onEvent,
    });

    expect(result).toMatchObject({
      sessionId: session.id,
      mode: 'diagnostics',
      status: 'completed',
      output: 'pong: hi',
      steps: 3,
    });
    expect(result.branchedSessionId).toBeUndefined();
    expect(result.toolCalls.map(({ name, successful }) => [name, successful])).toEqual([
      ['agent_change_mode', true],
      ['testing_ping_pong', true],
    ]);

    const [before, after, last] = h.server.requests.map((request) => request.body);
    expect(before!.tools.map((tool) => tool.name)).toEqual(GENERAL_TOOLS);
    expect(before!.instructions).toContain('# Current mode: General (general)\nGENERAL-SUMMARY');
    expect(after!.tools.map((tool) => tool.name)).toEqual(DIAGNOSTICS_TOOLS);
    expect(after!.instructions).toContain(
      '# Current mode: Diagnostics (diagnostics)\nDIAGNOSTICS-SUMMARY: run the reference tools exactly as asked.',
    );
    expect(after!.instructions).not.toContain('GENERAL-SUMMARY');
    expect(after!.instructions).toContain('- general (General): Everyday help and quick calculations.');
    expect(guidanceNames(after!.instructions)).toEqual(DIAGNOSTICS_TOOLS);
    expect(guidanceOf(after!.instructions, 'testing_ping_pong')).toBe(
      h.registry.get('testing_ping_pong')!.usageMetadata,
    );
    expect(last!.tools.map((tool) => tool.name)).toEqual(DIAGNOSTICS_TOOLS);

    // The tool's own result reached the model, and the ping ran in the new mode.
    const outputs = after!.input.filter((item) => item.type === 'function_call_output');
    expect(JSON.parse(outputs[0]!.output as string)).toEqual({
      success: true,
      mode: 'diagnostics',
      branch: false,
      reason: 'The user wants to test the tools.',
      sessionId: session.id,
      conversationId: session.id,
    });
    expect(JSON.parse(result.toolCalls[1]!.output)).toMatchObject({ reply: 'pong: hi', sessionId: session.id });

    const stored = await h.store.getSession(session.id);
    expect(stored!.mode).toBe('diagnostics');
    expect(stored!.history).toEqual([
      expect.objectContaining({ fromMode: 'general', toMode: 'diagnostics', branch: false, org: 'acme', user: 'ada' }),
    ]);
    expect(log.events.filter((event) => event.type === 'mode_changed')).toEqual([
      { type: 'mode_changed', sessionId: session.id, fromMode: 'general', toMode: 'diagnostics', branch: false },
    ]);
    expect(
      log.events.filter((event) => event.type === 'model_request').map((event) => (event as { mode: string }).mode),
    ).toEqual(['general', 'diagnostics', 'diagnostics']);
  });

  it('keeps the mode when the change is refused, and the model reads why', async () => {
    const session = await h.store.createSession({});
    h.server.script(
      respond(
        undefined,
        call('c_mode', 'agent_change_mode', { mode: 'poetry', branch: false, reason: 'The user wants poems.' }),
      ),
      respond('There is no poetry mode.'),
    );
    const log = eventLog();

    const result = await h.reasoner.runTurn(session.id, 'Switch to poetry.', { onEvent: log.onEvent });

    expect(result.mode).toBe('general');
    expect(h.server.requests[1]!.body.tools.map((tool) => tool.name)).toEqual(GENERAL_TOOLS);
    const output = JSON.parse(
      h.server.requests[1]!.body.input.find((item) => item.type === 'function_call_output')!.output as string,
    );
    expect(output.error.code).toBe('UNKNOWN_MODE');
    expect(output.error.message).toContain('Valid mode keys: general, diagnostics, workspace');
    expect(log.types()).not.toContain('mode_changed');
  });
});

describe('a mode change with branch: true', () => {
  it('continues the work in a new child session in the new mode and reports its id', async () => {
    const parent = await h.store.createSession({ org: 'acme', user: 'ada' });
    h.server.script(respond('Which would you prefer: stay, switch, or switch in a new session?'));
    await h.reasoner.runTurn(parent.id, 'I want to run tool diagnostics.');
    h.server.script(
      respond(
        undefined,
        call('c_branch', 'agent_change_mode', {
          mode: 'diagnostics',
          branch: true,
          reason: 'The user wants the diagnostics in their own session.',
        }),
      ),
      respond(undefined, call('c_ping', 'testing_ping_pong', { message: 'hi', count: 2 })),
      respond('pong pong: hi'),
    );
    const log = eventLog();

    const result = await h.reasoner.runTurn(parent.id, 'Option 3.', { onEvent: log.onEvent });

    const childId = result.branchedSessionId!;
    expect(childId).toEqual(expect.any(String));
    expect(childId).not.toBe(parent.id);
    expect(result).toMatchObject({
      sessionId: parent.id,
      mode: 'diagnostics',
      status: 'completed',
      output: 'pong pong: hi',
    });
    expect(toMessageResponse(result)).toMatchObject({
      sessionId: parent.id,
      branchedSessionId: childId,
      mode: 'diagnostics',
    });
    expect(result.toolCalls.map(({ name, sessionId }) => [name, sessionId])).toEqual([
      ['agent_change_mode', parent.id],
      ['testing_ping_pong', childId],
    ]);
    expect(JSON.parse(result.toolCalls[0]!.output)).toMatchObject({ branch: true, branchedSessionId: childId });
    // The ping ran with the child's context.
    expect(JSON.parse(result.toolCalls[1]!.output)).toMatchObject({ sessionId: childId });

    // The child: linked to its parent, in the new mode, holding the conversation so far plus its own work.
    const child = await h.store.getSession(childId);
    expect(child).toMatchObject({ parentId: parent.id, mode: 'diagnostics', org: 'acme', user: 'ada' });
    const parentItems = await h.store.listConversationItems(parent.id);
    const childItems = await h.store.listConversationItems(childId);
    expect(childItems.slice(0, parentItems.length)).toEqual(parentItems);
    expect(childItems.slice(parentItems.length).map((item) => (item as { type: string }).type)).toEqual([
      'function_call',
      'function_call_output',
      'message',
    ]);
    // The parent stops at the mode change; the model was told where the work went.
    expect(parentItems.at(-1)).toMatchObject({ type: 'function_call_output', call_id: 'c_branch' });
    const changeOutput = JSON.parse((parentItems.at(-1) as { output: string }).output);
    expect(changeOutput).toMatchObject({
      success: true,
      mode: 'diagnostics',
      branch: true,
      sessionId: parent.id,
      branchedSessionId: childId,
    });

    // The parent keeps the mode the tool gave it, with the branch recorded in its history.
    const parentNow = await h.store.getSession(parent.id);
    expect(parentNow!.mode).toBe('diagnostics');
    expect(parentNow!.history).toEqual([
      expect.objectContaining({ fromMode: 'general', toMode: 'diagnostics', branch: true }),
    ]);

    // What the SDK sent after the branch: the new mode, and the whole conversation so far.
    const afterBranch = h.server.requests[2]!.body;
    expect(afterBranch.tools.map((tool) => tool.name)).toEqual(DIAGNOSTICS_TOOLS);
    expect(afterBranch.instructions).toContain('# Current mode: Diagnostics (diagnostics)');
    expect(
      afterBranch.input.map((item) =>
        item.type === 'message' ? `${String(item.role)}` : `${String(item.type)}:${String(item.call_id)}`,
      ),
    ).toEqual(['user', 'assistant', 'user', 'function_call:c_branch', 'function_call_output:c_branch']);
    expect(log.events.filter((event) => event.type === 'mode_changed')).toEqual([
      {
        type: 'mode_changed',
        sessionId: parent.id,
        fromMode: 'general',
        toMode: 'diagnostics',
        branch: true,
        branchedSessionId: childId,
      },
    ]);
    expect(
      log.events
        .filter((event) => event.type === 'text_delta')
        .every((event) => (event as { sessionId: string }).sessionId === childId),
    ).toBe(true);

    // The next message goes to the child and carries on there.
    h.server.script(respond('Still in diagnostics.'));
    const next = await h.reasoner.runTurn(childId, 'Thanks');
    expect(next).toMatchObject({ sessionId: childId, mode: 'diagnostics', output: 'Still in diagnostics.' });
    expect(h.server.requests[4]!.body.input).toHaveLength(childItems.length + 1);
  });

  it('moves a client call made alongside the branch into the child, where the client answers it', async () => {
    const parent = await h.store.createSession({ mode: 'workspace' });
    h.server.script(
      respond(
        undefined,
        call('c_edit', 'workspace_apply_edit', { path: 'notes.md', content: 'x' }),
        call('c_branch', 'agent_change_mode', {
          mode: 'diagnostics',
          branch: true,
          reason: 'The user wants diagnostics in a new session.',
        }),
      ),
    );

    const result = await h.reasoner.runTurn(parent.id, 'Save my notes, then start diagnostics in a new session.');

    const childId = result.branchedSessionId!;
    expect(result.status).toBe('pending_tool_calls');
    expect(result.pendingToolCalls).toEqual([expect.objectContaining({ callId: 'c_edit', sessionId: childId })]);
    expect(await h.reasoner.pendingToolCalls(childId)).toHaveLength(1);
    expect(await h.reasoner.pendingToolCalls(parent.id)).toEqual([]);
    const parentItems = (await h.store.listConversationItems(parent.id)) as Array<{
      type: string;
      call_id?: string;
      output?: string;
    }>;
    const moved = parentItems.find((item) => item.type === 'function_call_output' && item.call_id === 'c_edit')!;
    expect(JSON.parse(moved.output!).error).toEqual({
      message: `This call continues in session ${childId}, where the work moved when the mode changed.`,
      code: 'MOVED_TO_BRANCH',
    });

    h.server.script(respond('Notes saved; diagnostics ready.'));
    const resumed = await h.reasoner.submitToolOutputs(childId, [{ callId: 'c_edit', output: { applied: true } }]);
    expect(resumed).toMatchObject({ sessionId: childId, mode: 'diagnostics', status: 'completed' });
    expect(h.server.requests[1]!.body.tools.map((tool) => tool.name)).toEqual(DIAGNOSTICS_TOOLS);
  });
});

describe('the mode, checked when each tool runs', () => {
  it("refuses a tool the session's mode stopped offering while the model was answering, and the turn goes on", async () => {
    const session = await h.store.createSession({ mode: 'diagnostics' });
    const ran: string[] = [];
    const reasoner = createReasoner({
      ...h.options,
      executor: {
        execute(name, args, context, options) {
          ran.push(`${name}@${context?.mode}`);
          return h.executor.execute(name, args, context, options);
        },
      },
    });
    h.server.script(
      respond(
        undefined,
        call('c_ping', 'testing_ping_pong', { message: 'hi', count: null }),
        call('c_calc', 'testing_calculator', { operation: 'add', a: 2, b: 3 }),
      ),
      respond('Ping is gone; 2 + 3 = 5.'),
    );
    // Another client moves the session to general while the first model call is in flight.
    h.server.onRequest = async (request) => {
      if (h.server.requests.indexOf(request) === 0) {
        const moved = await h.store.setSessionMode(session.id, 'general', 'Another client switched.', null, null);
        expect(moved.applied).toBe(true);
      }
    };

    const result = await reasoner.runTurn(session.id, 'Ping, then add 2 and 3.');

    expect(result).toMatchObject({ status: 'completed', mode: 'general', output: 'Ping is gone; 2 + 3 = 5.' });
    // The ping was never run; the calculator, offered in both modes, ran in the mode of the moment.
    expect(ran).toEqual(['testing_calculator@general']);
    expect(result.toolCalls.map(({ name, successful }) => [name, successful])).toEqual([
      ['testing_ping_pong', false],
      ['testing_calculator', true],
    ]);
    const outputs = h.server.requests[1]!.body.input.filter((item) => item.type === 'function_call_output').map(
      (item) => JSON.parse(item.output as string),
    );
    expect(outputs[0]).toEqual({
      error: {
        code: 'TOOL_NOT_OFFERED',
        message: expect.stringMatching(
          /^Tool "testing_ping_pong" is not offered in mode "general" \(session [\w-]+\); it was not run\. .*list the tools again/,
        ),
      },
    });
    expect(outputs[1]).toMatchObject({ value: 5 });
    // The next model call already carries the new mode's tools.
    expect(h.server.requests[1]!.body.tools.map((tool) => tool.name)).toEqual(GENERAL_TOOLS);
  });
});
