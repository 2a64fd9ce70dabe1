import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import { ToolMessage } from '@langchain/core/messages';
import { createAgent, createMiddleware, FakeToolCallingModel } from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openScratchSessions, type ScratchSessions } from '@aptix/adapter-core/testing';
import { createLangChainTools } from '../src/index.js';

const find = (id: string, query: string) => ({ id, name: 'aptix_find_tools', args: { query } });
const through = (id: string, name: string, args: Record<string, unknown>) => ({
  id,
  name: 'aptix_call_tool',
  args: { name, arguments: args },
});

describe('@aptix/langchain with deferred modes, through a LangChain agent (createAgent)', () => {
  let sessions: ScratchSessions;
  beforeAll(async () => void (sessions = await openScratchSessions()));
  afterAll(() => sessions.close());

  it('the model finds a tool, calls it through aptix_call_tool, reads its result or what to fix, and follows a mode change', async () => {
    const scope = await sessions.newSession('general');
    const aptix = await createLangChainTools({
      tools: [samples, modeCatalogPackage, modeChangePackage],
      session: scope,
      deferred: true,
    });
    const model = new FakeToolCallingModel({
      toolCalls: [
        [find('c1', 'multiply two numbers')],
        [through('c2', 'testing_calculator', { operation: 'multiply', a: 6, b: 7 })],
        [through('c3', 'testing_calculator', { operation: 'multiply', a: 'six', b: 7 })],
        [{ id: 'c4', name: 'aptix_call_tool', args: { arguments: { a: 1 } } }],
        [through('c5', 'testing_ping_pong', { message: 'hi' })],
        [
          through('c6', 'agent_change_mode', {
            mode: 'tool_diagnostics',
            branch: false,
            reason: 'The user wants to test tools.',
          }),
        ],
        [find('c7', 'ping')],
        [through('c8', 'testing_ping_pong', { message: 'hi', count: 2 })],
        [through('c9', 'testing_issue_refund', { orderId: 'A-1', amount: 500, currency: 'EUR' })],
        [],
      ],
    });
    const offered: string[][] = [];
    const agent = createAgent({
      model,
      tools: aptix.tools,
      middleware: [
        createMiddleware({
          name: 'AptixModes',
          wrapModelCall: (request, handler) =>
            aptix.wrapModelCall(request, (scoped) => {
              offered.push(scoped.tools.map((tool) => (tool as { name: string }).name));
              return handler(scoped);
            }),
        }),
      ],
    });

    const result = await agent.invoke({ messages: [{ role: 'user', content: 'multiply, then ping' }] });

    const answers = new Map(
      result.messages
        .filter((message) => ToolMessage.isInstance(message))
        .map((message) => [message.tool_call_id, message]),
    );
    const json = (id: string) => JSON.parse(answers.get(id)!.content as string);
    expect(offered[0]).toEqual(['aptix_find_tools', 'aptix_call_tool', 'agent_list_modes', 'agent_change_mode']);
    expect(json('c1')).toMatchObject({ mode: 'general', tools: [{ name: 'testing_calculator' }] });
    expect(answers.get('c2')!.status).toBe('success');
    expect(json('c2')).toEqual({
      value: 42,
      expression: '6 * 7 = 42',
      sessionId: scope.sessionId,
      conversationId: null,
    });
    expect(answers.get('c3')!.status).toBe('error');
    expect(json('c3')).toMatchObject({ error: { code: 'INVALID_ARGUMENTS', message: expect.stringContaining("'a'") } });
    expect(json('c4')).toMatchObject({
      error: { code: 'INVALID_ARGUMENTS', message: expect.stringMatching(/aptix_call_tool.*'name'/) },
    });
    expect(json('c5')).toMatchObject({
      error: {
        code: 'TOOL_NOT_IN_MODE',
        message: expect.stringContaining(
          'Find this mode\'s tools with aptix_find_tools. "testing_ping_pong" is offered in mode "tool_diagnostics": switch with agent_change_mode',
        ),
      },
    });
    expect(json('c6')).toMatchObject({ success: true, mode: 'tool_diagnostics' });
    expect(json('c7')).toMatchObject({
      mode: 'tool_diagnostics',
      tools: [expect.objectContaining({ name: 'testing_ping_pong' })],
    });
    expect(json('c8')).toMatchObject({ reply: 'pong pong: hi', sessionId: scope.sessionId });
    // LangChain has no approval step to wire: a gated call through aptix_call_tool is refused, as a direct one is.
    expect(json('c9')).toMatchObject({
      error: { code: 'APPROVAL_REQUIRED', message: expect.stringContaining('500 EUR') },
    });
    expect((await sessions.store.getSession(scope.sessionId))!.mode).toBe('tool_diagnostics');
  });
});
