import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import { Agent, run } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openScratchSessions, recordCalls, type ScratchSessions } from '@aptix/adapter-core/testing';
import { createAgentsTools } from '../src/index.js';
import { call, lastToolOutput, say, ScriptedModel } from './scripted-model.js';

describe('@aptix/openai-agents through run()', () => {
  let sessions: ScratchSessions;
  beforeAll(async () => void (sessions = await openScratchSessions()));
  afterAll(() => sessions.close());

  it("runs the model's tool call through the Aptix tool, strict where Aptix says so", async () => {
    const { tools } = await createAgentsTools({ tools: [samples], conversationId: 'conv-1' });
    let readBack: string | undefined;
    const model = new ScriptedModel([
      () => [call('testing_calculator', { operation: 'multiply', a: 6, b: 7 })],
      (request) => {
        readBack = lastToolOutput(request);
        return [say('42')];
      },
    ]);
    const result = await run(
      new Agent({ name: 'calc', instructions: 'Be brief.', tools, model }),
      'What is 6 times 7?',
    );
    expect(result.finalOutput).toBe('42');
    expect(JSON.parse(readBack!)).toEqual({
      value: 42,
      expression: '6 * 7 = 42',
      sessionId: null,
      conversationId: 'conv-1',
    });
    const ping = model.requests[0]!.tools.find((tool) => tool.name === 'testing_ping_pong') as unknown as {
      strict: boolean;
      parameters: { required: string[] };
    };
    expect(ping.strict).toBe(true);
    expect(ping.parameters.required).toEqual(['message', 'count']);
  });

  it('answers invalid arguments with a tool error naming the field, and the run goes on', async () => {
    const { tools } = await createAgentsTools({ tools: [samples] });
    let readBack: string | undefined;
    const model = new ScriptedModel([
      () => [call('testing_calculator', { operation: 'multiply', a: 'six', b: 7 })],
      (request) => {
        readBack = lastToolOutput(request);
        return [say('I sent a bad number.')];
      },
    ]);
    const result = await run(new Agent({ name: 'calc', tools, model }), 'six times seven');
    expect(result.finalOutput).toBe('I sent a bad number.');
    const payload = JSON.parse(readBack!) as { error: { message: string; code: string } };
    expect(payload.error.code).toBe('INVALID_ARGUMENTS');
    expect(payload.error.message).toContain("'a'");
  });

  it("a tool's failed result reaches the model with its message and code", async () => {
    const { tools } = await createAgentsTools({ tools: [samples] });
    let readBack: string | undefined;
    const model = new ScriptedModel([
      () => [call('testing_failure_injection', { mode: 'error' })],
      (request) => {
        readBack = lastToolOutput(request);
        return [say('It failed as asked.')];
      },
    ]);
    await run(new Agent({ name: 'diag', tools, model }), 'inject a failure');
    const payload = JSON.parse(readBack!) as { error: { message: string; code: string } };
    expect(payload.error.code).toBe('INTENTIONAL_FAILURE');
    expect(payload.error.message).toMatch(/\S/);
  });

  it('a tool that throws reaches the model as TOOL_EXCEPTION, with nothing of the exception', async () => {
    const { tools } = await createAgentsTools({ tools: [samples] });
    let readBack: string | undefined;
    const model = new ScriptedModel([
      () => [call('testing_failure_injection', { mode: 'exception' })],
      (request) => {
        readBack = lastToolOutput(request);
        return [say('The tool broke.')];
      },
    ]);
    const result = await run(new Agent({ name: 'diag', tools, model }), 'make it throw');
    expect(result.finalOutput).toBe('The tool broke.');
    expect(JSON.parse(readBack!)).toEqual({
      error: { message: 'testing_failure_injection failed to process arguments.', code: 'TOOL_EXCEPTION' },
    });
    expect(readBack).not.toMatch(/\bat\s|\.ts:|Error:/);
  });

  it("a call the Agents SDK's time-out stops is a TIMEOUT failure, and the run goes on", async () => {
    const { tools } = await createAgentsTools({ tools: [samples], timeoutMs: 50 });
    let readBack: string | undefined;
    const model = new ScriptedModel([
      () => [call('testing_delay', { milliseconds: 60_000 })],
      (request) => {
        readBack = lastToolOutput(request);
        return [say('It took too long.')];
      },
    ]);
    const result = await run(new Agent({ name: 'diag', tools, model }), 'wait a minute');
    expect(result.finalOutput).toBe('It took too long.');
    expect(JSON.parse(readBack!)).toMatchObject({ error: { code: 'TIMEOUT' } });
  });

  it('cancelling the run stops the running tool', async () => {
    const { tools, aptix } = await createAgentsTools({ tools: [samples] });
    const controller = new AbortController();
    // The tool's own answer: the run rejects, so its results never reach the caller.
    const outcomes = recordCalls(aptix, () => setImmediate(() => controller.abort()));
    const model = new ScriptedModel([
      () => [call('testing_delay', { milliseconds: 60_000 })],
      () => [say('never reached')],
    ]);
    await expect(
      run(new Agent({ name: 'diag', tools, model }), 'wait a minute', { signal: controller.signal }),
    ).rejects.toThrow();
    await expect.poll(() => outcomes.length).toBe(1);
    expect(JSON.parse((outcomes[0] as { result: string }).result)).toMatchObject({
      wasCancelled: true,
      requestedMs: 60_000,
    });
  });

  it("a call the tool's ApprovalPolicy gates interrupts the run; once approved, it runs", async () => {
    const { tools } = await createAgentsTools({ tools: [samples] });
    const model = new ScriptedModel([
      () => [call('testing_issue_refund', { orderId: 'A-1', amount: 500, currency: 'EUR' })],
      (request) => [say(lastToolOutput(request))],
    ]);
    const agent = new Agent({ name: 'refunds', tools, model });
    const first = await run(agent, 'Refund 500 EUR on order A-1.');
    expect(first.interruptions).toHaveLength(1);
    expect(model.requests).toHaveLength(1); // the run waits for a person; nothing ran
    first.state.approve(first.interruptions[0]!);
    const second = await run(agent, first.state);
    expect(JSON.parse(second.finalOutput!)).toMatchObject({ orderId: 'A-1', amount: 500, currency: 'EUR' });
  });

  it("offers the session mode's tools, and the turn after agent_change_mode sees the new mode's", async () => {
    const session = await sessions.store.createSession({ mode: 'general' });
    const aptix = await createAgentsTools({
      tools: [samples, modeCatalogPackage, modeChangePackage],
      session: { sessionManager: sessions.store, sessionId: session.id, modeCatalog: sessions.catalog },
    });
    const model = new ScriptedModel([
      () => [
        call('agent_change_mode', { mode: 'tool_diagnostics', branch: false, reason: 'The user wants to test tools.' }),
      ],
      () => [call('testing_ping_pong', { message: 'hi', count: null })],
      (request) => [say(lastToolOutput(request))],
    ]);
    const instructions: string[] = [];
    const agent = new Agent({
      name: 'modes',
      instructions: async () => {
        const text = `Be brief.\n\n${await aptix.guidance()}`;
        instructions.push(text);
        return text;
      },
      tools: aptix.tools,
      model,
    });
    const result = await run(agent, 'ping me');
    expect(model.offered[0]).toEqual([
      'agent_hello_world',
      'testing_calculator',
      'agent_list_modes',
      'agent_change_mode',
    ]);
    expect(model.offered[1]).toEqual(
      expect.arrayContaining(['testing_ping_pong', 'testing_delay', 'agent_change_mode']),
    );
    expect(JSON.parse(result.finalOutput!)).toMatchObject({ reply: 'pong: hi', sessionId: session.id });
    expect((await sessions.store.getSession(session.id))!.mode).toBe('tool_diagnostics');
    expect(instructions[0]).not.toContain('<tool_guidance name="testing_delay">');
    expect(instructions[1]).toContain('<tool_guidance name="testing_delay">');
  });
});
