import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PENDING_CALL_ITEM, ReasonerErrorCode, toMessageResponse } from '../src/index.js';
import { createHarness, eventLog, type Harness } from './support/harness.js';
import { call, respond } from '../src/testing/index.js';

let h: Harness;
const others: Harness[] = [];
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  for (const other of others.splice(0)) await other.close();
  await h.close();
});

/** A second host process on the same SQLite file and the same model endpoint. */
async function restart(): Promise<Harness> {
  await h.store.close();
  const next = await createHarness({ filename: h.filename, server: h.server });
  others.push(next);
  return next;
}

const userText = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });

describe('a restarted host', () => {
  it('continues the conversation from the session store, sending every earlier item', async () => {
    const session = await h.store.createSession({});
    h.server.script(
      respond(undefined, call('call_add', 'testing_calculator', { operation: 'add', a: 40, b: 2 })),
      respond('It is 42.'),
    );
    await h.reasoner.runTurn(session.id, 'What is 40 + 2?');
    const firstTurn = h.server.requests[1]!.body.input;

    const host = await restart();
    host.server.script(respond('You asked what 40 + 2 is.'));
    const result = await host.reasoner.runTurn(session.id, 'What did I ask?');

    expect(result.output).toBe('You asked what 40 + 2 is.');
    expect(host.reasoner).not.toBe(h.reasoner);
    expect(host.server.requests[2]!.body.input).toEqual([
      ...firstTurn,
      { type: 'message', role: 'assistant', content: 'It is 42.' },
      userText('What did I ask?'),
    ]);
    expect(firstTurn.slice(1)).toEqual([
      {
        type: 'function_call',
        call_id: 'call_add',
        name: 'testing_calculator',
        arguments: '{"operation":"add","a":40,"b":2}',
      },
      { type: 'function_call_output', call_id: 'call_add', output: expect.stringContaining('"value":42') },
    ]);
  });

  it('answers calls the previous host was running when it stopped, so the conversation is valid again', async () => {
    const session = await h.store.createSession({});
    // The host stored the model's call, then died before the tool's output was written.
    await h.store.appendConversationItems(session.id, [
      userText('Add 1 and 1.'),
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_lost',
        name: 'testing_calculator',
        arguments: '{"operation":"add","a":1,"b":1}',
        status: 'completed',
      },
    ]);

    const host = await restart();
    host.server.script(respond('Sorry, that was interrupted. 1 + 1 = 2.'));
    await host.reasoner.runTurn(session.id, 'Hello again?');

    const input = host.server.requests[0]!.body.input;
    expect(input.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
    expect(input[2]!.call_id).toBe('call_lost');
    expect(JSON.parse(input[2]!.output as string).error).toEqual({
      message: expect.stringContaining('testing_calculator was interrupted'),
      code: 'CALL_INTERRUPTED',
    });
  });
});

describe('a client-executed tool', () => {
  it("ends the turn with a pending call, and the client's output resumes it, even on a restarted host", async () => {
    const session = await h.store.createSession({ mode: 'workspace' });
    h.server.script(
      respond(
        'I will write the file.',
        call('call_edit', 'workspace_apply_edit', { path: 'README.md', content: '# Hello\n' }),
      ),
    );
    const log = eventLog();

    const result = await h.reasoner.runTurn(session.id, 'Write a README.', { onEvent: log.onEvent });

    expect(h.reasoner.clientExecutedTools).toEqual(new Set(['workspace_apply_edit']));
    expect(result.status).toBe('pending_tool_calls');
    expect(result.output).toBe('I will write the file.');
    expect(result.toolCalls).toEqual([]);
    expect(result.pendingToolCalls).toEqual([
      {
        callId: 'call_edit',
        name: 'workspace_apply_edit',
        arguments: '{"path":"README.md","content":"# Hello\\n"}',
        sessionId: session.id,
        serverResult: expect.any(String),
      },
    ]);
    // The server part ran: the client gets what it prepared.
    expect(JSON.parse(result.pendingToolCalls[0]!.serverResult)).toEqual({
      edit: { path: 'README.md', bytes: 8 },
      sessionId: session.id,
      conversationId: session.id,
    });
    expect(toMessageResponse(result).pendingToolCalls).toHaveLength(1);
    expect(log.types()).toContain('tool_call_pending');
    expect(log.types()).not.toContain('tool_call_finished');
    expect(h.server.requests).toHaveLength(1);

    // Nothing else can happen in the session until the client answers.
    await expect(h.reasoner.runTurn(session.id, 'Something else')).rejects.toMatchObject({
      code: ReasonerErrorCode.PENDING_TOOL_CALLS,
      httpStatus: 409,
      message: expect.stringContaining('call_edit (workspace_apply_edit)'),
    });
    await expect(
      h.reasoner.submitToolOutputs(session.id, [{ callId: 'call_other', output: 'x' }]),
    ).rejects.toMatchObject({
      code: ReasonerErrorCode.UNKNOWN_TOOL_CALL,
      message: expect.stringContaining('It is waiting for: call_edit'),
    });

    const host = await restart();
    expect(await host.reasoner.pendingToolCalls(session.id)).toEqual(result.pendingToolCalls);
    host.server.script(respond('README.md is written.'));
    const resumed = await host.reasoner.submitToolOutputs(session.id, [
      { callId: 'call_edit', output: { applied: true, path: 'README.md' } },
    ]);

    expect(resumed).toMatchObject({
      sessionId: session.id,
      status: 'completed',
      output: 'README.md is written.',
      steps: 1,
      pendingToolCalls: [],
    });
    const input = host.server.requests[1]!.body.input;
    expect(input).toEqual([
      userText('Write a README.'),
      { type: 'message', role: 'assistant', content: 'I will write the file.' },
      {
        type: 'function_call',
        call_id: 'call_edit',
        name: 'workspace_apply_edit',
        arguments: '{"path":"README.md","content":"# Hello\\n"}',
      },
      { type: 'function_call_output', call_id: 'call_edit', output: '{"applied":true,"path":"README.md"}' },
    ]);
    expect(input.some((item) => item.type === PENDING_CALL_ITEM)).toBe(false);
    expect(await host.reasoner.pendingToolCalls(session.id)).toEqual([]);
  });

  it("sends the client's failure to the model as an error payload", async () => {
    const session = await h.store.createSession({ mode: 'workspace' });
    h.server.script(
      respond(undefined, call('call_edit', 'workspace_apply_edit', { path: 'a.txt', content: 'x' })),
      respond('The file is read-only.'),
    );
    await h.reasoner.runTurn(session.id, 'Write a.txt');

    const resumed = await h.reasoner.submitToolOutputs(session.id, [
      { callId: 'call_edit', error: { message: 'a.txt is read-only.' } },
    ]);

    expect(resumed.output).toBe('The file is read-only.');
    const output = h.server.requests[1]!.body.input.find((item) => item.type === 'function_call_output')!
      .output as string;
    expect(JSON.parse(output)).toEqual({ error: { message: 'a.txt is read-only.', code: 'CLIENT_TOOL_FAILED' } });
  });

  it('waits for every pending call before calling the model again', async () => {
    const session = await h.store.createSession({ mode: 'workspace' });
    h.server.script(
      respond(
        undefined,
        call('e1', 'workspace_apply_edit', { path: 'a.txt', content: 'a' }),
        call('e2', 'workspace_apply_edit', { path: 'b.txt', content: 'b' }),
      ),
      respond('Both written.'),
    );
    const first = await h.reasoner.runTurn(session.id, 'Write two files');
    expect(first.pendingToolCalls.map((pending) => pending.callId)).toEqual(['e1', 'e2']);

    const partial = await h.reasoner.submitToolOutputs(session.id, [{ callId: 'e2', output: 'ok' }]);
    expect(partial).toMatchObject({ status: 'pending_tool_calls', steps: 0 });
    expect(partial.pendingToolCalls.map((pending) => pending.callId)).toEqual(['e1']);
    expect(h.server.requests).toHaveLength(1);

    const done = await h.reasoner.submitToolOutputs(session.id, [{ callId: 'e1', output: 'ok' }]);
    expect(done.output).toBe('Both written.');
    expect(
      h.server.requests[1]!.body.input.filter((item) => item.type === 'function_call_output').map(
        (item) => item.call_id,
      ),
    ).toEqual(['e2', 'e1']);
  });

  it('refuses malformed submissions with a message saying what to send', async () => {
    const session = await h.store.createSession({ mode: 'workspace' });
    h.server.script(respond(undefined, call('e1', 'workspace_apply_edit', { path: 'a.txt', content: 'a' })));
    await h.reasoner.runTurn(session.id, 'Write a file');

    await expect(h.reasoner.submitToolOutputs(session.id, [])).rejects.toMatchObject({
      code: ReasonerErrorCode.INVALID_INPUT,
    });
    await expect(h.reasoner.submitToolOutputs(session.id, [{ callId: 'e1' } as never])).rejects.toMatchObject({
      code: ReasonerErrorCode.INVALID_INPUT,
      message: expect.stringContaining('exactly one of "output"'),
    });
    await expect(
      h.reasoner.submitToolOutputs(session.id, [
        { callId: 'e1', output: 'a' },
        { callId: 'e1', output: 'b' },
      ]),
    ).rejects.toMatchObject({
      code: ReasonerErrorCode.INVALID_INPUT,
      message: expect.stringContaining('answered twice'),
    });
    expect(await h.reasoner.pendingToolCalls(session.id)).toHaveLength(1);
  });

  it('fails a refused server part straight back to the model, without involving the client', async () => {
    const session = await h.store.createSession({ mode: 'workspace' });
    h.server.script(
      respond(undefined, call('e1', 'workspace_apply_edit', { path: '../etc/passwd', content: '' })),
      respond('I cannot edit that path.'),
    );

    const result = await h.reasoner.runTurn(session.id, 'Edit ../etc/passwd');

    expect(result).toMatchObject({ status: 'completed', pendingToolCalls: [] });
    expect(result.toolCalls).toEqual([expect.objectContaining({ callId: 'e1', successful: false })]);
    expect(JSON.parse(result.toolCalls[0]!.output).error.code).toBe('PATH_OUTSIDE_WORKSPACE');
  });
});
