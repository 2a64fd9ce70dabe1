import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import type { ToolMessage } from '@langchain/core/messages';
import { createAgent, createMiddleware } from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openScratchSessions, recordCalls, type ScratchSessions } from '@aptix/adapter-core/testing';
import { AptixToolError, createLangChainTools } from '../src/index.js';
import { call, lastToolMessage, say, scriptedModel } from './scripted-model.js';

describe('@aptix/langchain through a LangChain agent (createAgent)', () => {
  let sessions: ScratchSessions;
  beforeAll(async () => void (sessions = await openScratchSessions()));
  afterAll(() => sessions.close());

  it("runs the model's tool call through the Aptix tool and gives the model its result", async () => {
    const { tools } = await createLangChainTools({ tools: [samples], conversationId: 'conv-1' });
    let readBack: ToolMessage | undefined;
    const { model } = scriptedModel([
      call('testing_calculator', { operation: 'multiply', a: 6, b: 7 }),
      (messages) => {
        readBack = lastToolMessage(messages);
        return say('42');
      },
    ]);
    const result = await createAgent({ model, tools }).invoke({
      messages: [{ role: 'user', content: 'What is 6 times 7?' }],
    });
    expect(result.messages.at(-1)!.content).toBe('42');
    expect(readBack!.status).toBe('success');
    expect(JSON.parse(readBack!.content as string)).toEqual({
      value: 42,
      expression: '6 * 7 = 42',
      sessionId: null,
      conversationId: 'conv-1',
    });
  });

  it("answers invalid arguments with an error ToolMessage naming the field (Aptix's message, not LangChain's), and the loop goes on", async () => {
    const { tools } = await createLangChainTools({ tools: [samples] });
    let readBack: ToolMessage | undefined;
    const { model } = scriptedModel([
      call('testing_calculator', { operation: 'multiply', a: 'six', b: 7 }),
      (messages) => {
        readBack = lastToolMessage(messages);
        return say('I sent a bad number.');
      },
    ]);
    const result = await createAgent({ model, tools }).invoke({
      messages: [{ role: 'user', content: 'six times seven' }],
    });
    expect(result.messages.at(-1)!.content).toBe('I sent a bad number.');
    expect(readBack!.status).toBe('error');
    const payload = JSON.parse(readBack!.content as string) as { error: { message: string; code: string } };
    expect(payload.error.code).toBe('INVALID_ARGUMENTS');
    expect(payload.error.message).toContain("'a'");
  });

  it("a tool's failed result is an error ToolMessage with its message and code; plain invoke throws AptixToolError", async () => {
    const { tools } = await createLangChainTools({ tools: [samples] });
    let readBack: ToolMessage | undefined;
    const { model } = scriptedModel([
      call('testing_calculator', { operation: 'divide', a: 1, b: 0 }),
      (messages) => {
        readBack = lastToolMessage(messages);
        return say('Cannot divide by zero.');
      },
    ]);
    await createAgent({ model, tools }).invoke({ messages: [{ role: 'user', content: '1/0' }] });
    expect(readBack!.status).toBe('error');
    expect(JSON.parse(readBack!.content as string)).toMatchObject({ error: { code: 'DIVIDE_BY_ZERO' } });

    const calculator = tools.find((tool) => tool.name === 'testing_calculator')!;
    await expect(calculator.invoke({ operation: 'divide', a: 1, b: 0 })).rejects.toBeInstanceOf(AptixToolError);
    expect(JSON.parse((await calculator.invoke({ operation: 'add', a: 1, b: 2 })) as string)).toMatchObject({
      value: 3,
    });
  });

  it("a call stopped by the run's time-out is a TIMEOUT failure", async () => {
    const { tools } = await createLangChainTools({ tools: [samples] });
    const delay = tools.find((tool) => tool.name === 'testing_delay')!;
    const message = (await delay.invoke(
      { type: 'tool_call', id: 't1', name: 'testing_delay', args: { milliseconds: 60_000 } },
      { timeout: 50 },
    )) as ToolMessage;
    expect(message.status).toBe('error');
    expect(JSON.parse(message.content as string)).toMatchObject({ error: { code: 'TIMEOUT' } });
  });

  it('cancelling the agent stops the running tool', async () => {
    const { tools, aptix } = await createLangChainTools({ tools: [samples] });
    const controller = new AbortController();
    // The tool's own answer: the run rejects, so its results never reach the caller.
    const outcomes = recordCalls(aptix, () => setImmediate(() => controller.abort()));
    const { model } = scriptedModel([call('testing_delay', { milliseconds: 60_000 }), () => say('never reached')]);
    await expect(
      createAgent({ model, tools }).invoke(
        { messages: [{ role: 'user', content: 'wait' }] },
        { signal: controller.signal },
      ),
    ).rejects.toThrow();
    await expect.poll(() => outcomes.length).toBe(1);
    expect(JSON.parse((outcomes[0] as { result: string }).result)).toMatchObject({
      wasCancelled: true,
      requestedMs: 60_000,
    });
  });

  it("with the mode middleware, the model call after agent_change_mode sees the new mode's tools", async () => {
    const session = await sessions.store.createSession({ mode: 'general' });
    const aptix = await createLangChainTools({
      tools: [samples, modeCatalogPackage, modeChangePackage],
      session: { sessionManager: sessions.store, sessionId: session.id, modeCatalog: sessions.catalog },
    });
    const { model, offered } = scriptedModel([
      call('testing_ping_pong', { message: 'too early' }, 'c1'),
      (messages) => {
        expect(JSON.parse(lastToolMessage(messages).content as string)).toMatchObject({
          error: { code: 'TOOL_NOT_IN_MODE' },
        });
        return call(
          'agent_change_mode',
          { mode: 'tool_diagnostics', branch: false, reason: 'The user wants to test tools.' },
          'c2',
        )();
      },
      call('testing_ping_pong', { message: 'hi' }, 'c3'),
      (messages) => say(lastToolMessage(messages).content as string),
    ]);
    const agent = createAgent({
      model,
      tools: aptix.tools,
      middleware: [createMiddleware({ name: 'AptixModes', wrapModelCall: aptix.wrapModelCall })],
    });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'ping me' }] });
    expect(offered[0]).toEqual(['agent_hello_world', 'testing_calculator', 'agent_list_modes', 'agent_change_mode']);
    expect(offered[2]).toEqual(expect.arrayContaining(['testing_ping_pong', 'testing_delay', 'agent_change_mode']));
    expect(JSON.parse(result.messages.at(-1)!.content as string)).toMatchObject({
      reply: 'pong: hi',
      sessionId: session.id,
    });
    expect((await sessions.store.getSession(session.id))!.mode).toBe('tool_diagnostics');
  });
});
