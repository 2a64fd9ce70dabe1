import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import { Agent, run } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openScratchSessions, type ScratchSessions } from '@aptix/adapter-core/testing';
import { createAgentsTools } from '../src/index.js';
import { call, lastToolOutput, say, ScriptedModel } from './scripted-model.js';

const TOOLS = [samples, modeCatalogPackage, modeChangePackage];
const OFFERED = ['aptix_find_tools', 'aptix_call_tool', 'agent_list_modes', 'agent_change_mode'];
const find = (query: string, id: string) => call('aptix_find_tools', { query, sessionId: null, limit: null }, id);
const through = (name: string, args: Record<string, unknown>, id: string) =>
  call('aptix_call_tool', { name, arguments: args }, id);

describe('@aptix/openai-agents with deferred modes, through run()', () => {
  let sessions: ScratchSessions;
  beforeAll(async () => void (sessions = await openScratchSessions()));
  afterAll(() => sessions.close());

  it('the model finds a tool, calls it through aptix_call_tool, reads its result or what to fix, and follows a mode change', async () => {
    const scope = await sessions.newSession('general');
    const aptix = await createAgentsTools({ tools: TOOLS, session: scope, deferred: true });
    const read: string[] = [];
    const next =
      (item: ReturnType<typeof call>) =>
      (request: Parameters<ConstructorParameters<typeof ScriptedModel>[0][number]>[0]) => {
        read.push(lastToolOutput(request));
        return [item];
      };
    const model = new ScriptedModel([
      () => [find('multiply two numbers', 'c1')],
      next(through('testing_calculator', { operation: 'multiply', a: 6, b: 7 }, 'c2')),
      next(through('testing_calculator', { operation: 'multiply', a: 'six', b: 7 }, 'c3')),
      next(through('testing_ping_pong', { message: 'hi' }, 'c4')),
      next(
        through(
          'agent_change_mode',
          { mode: 'tool_diagnostics', branch: false, reason: 'The user wants to test tools.' },
          'c5',
        ),
      ),
      next(find('ping', 'c6')),
      next(through('testing_ping_pong', { message: 'hi', count: 2 }, 'c7')),
      (request) => [say(lastToolOutput(request))],
    ]);
    const agent = new Agent({
      name: 'deferred',
      instructions: async () => `Be brief.\n\n${await aptix.guidance()}`,
      tools: aptix.tools,
      model,
    });

    const result = await run(agent, 'multiply, then ping', { maxTurns: 10 });

    expect(model.offered[0]).toEqual(OFFERED);
    expect(model.requests[0]!.systemInstructions).toContain(
      '# Finding tools\nThis mode offers 2 tools that are not listed to you.',
    );
    const [found, product, invalid, refused, changed, foundThere] = read.map((text) => JSON.parse(text));
    expect(found).toMatchObject({
      mode: 'general',
      sessionId: scope.sessionId,
      tools: [{ name: 'testing_calculator' }],
    });
    expect(product).toEqual({ value: 42, expression: '6 * 7 = 42', sessionId: scope.sessionId, conversationId: null });
    expect(invalid).toMatchObject({ error: { code: 'INVALID_ARGUMENTS', message: expect.stringContaining("'a'") } });
    expect(refused).toEqual({
      error: {
        code: 'TOOL_NOT_IN_MODE',
        message:
          `Tool "testing_ping_pong" is not offered in mode "general" (session ${scope.sessionId}); ` +
          `it was not run. Find this mode's tools with aptix_find_tools. "testing_ping_pong" is ` +
          `offered in mode "tool_diagnostics": switch with agent_change_mode once the user agrees, ` +
          `then call it again.`,
      },
    });
    expect(changed).toMatchObject({ success: true, mode: 'tool_diagnostics' });
    expect(foundThere).toMatchObject({
      mode: 'tool_diagnostics',
      tools: [expect.objectContaining({ name: 'testing_ping_pong' })],
    });
    expect(JSON.parse(result.finalOutput!)).toMatchObject({ reply: 'pong pong: hi', sessionId: scope.sessionId });
  });

  it('a gated call through aptix_call_tool interrupts the run for approval, as a direct one; once approved, it runs', async () => {
    const scope = await sessions.newSession('tool_diagnostics');
    const aptix = await createAgentsTools({ tools: TOOLS, session: scope, deferred: ['tool_diagnostics'] });
    const model = new ScriptedModel([
      () => [through('testing_issue_refund', { orderId: 'A-1', amount: 500, currency: 'EUR' }, 'r1')],
      (request) => [say(lastToolOutput(request))],
    ]);
    const agent = new Agent({ name: 'refunds', tools: aptix.tools, model });

    const first = await run(agent, 'Refund 500 EUR on order A-1.');

    expect(model.offered[0]).toEqual(OFFERED);
    expect(first.interruptions).toHaveLength(1);
    expect(first.interruptions[0]).toMatchObject({ rawItem: { name: 'aptix_call_tool', callId: 'r1' } });
    expect(model.requests).toHaveLength(1); // the run waits for a person; nothing ran
    first.state.approve(first.interruptions[0]!);
    const second = await run(agent, first.state);
    expect(JSON.parse(second.finalOutput!)).toMatchObject({
      orderId: 'A-1',
      amount: 500,
      currency: 'EUR',
      sessionId: scope.sessionId,
    });
  });
});
