import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openScratchSessions, type ScratchSessions } from '@aptix/adapter-core/testing';
import { createAiSdkTools } from '../src/index.js';
import { call, lastToolOutput, scriptedModel, text } from './scripted-model.js';

const TOOLS = [samples, modeCatalogPackage, modeChangePackage];
const OFFERED = ['aptix_find_tools', 'aptix_call_tool', 'agent_list_modes', 'agent_change_mode'];

describe('@aptix/ai-sdk with deferred modes, through generateText', () => {
  let sessions: ScratchSessions;
  beforeAll(async () => void (sessions = await openScratchSessions()));
  afterAll(() => sessions.close());

  it('offers the find and call tools; the model finds a tool, calls it through aptix_call_tool and reads its result, or the field its arguments got wrong', async () => {
    const scope = await sessions.newSession('general');
    const aptix = await createAiSdkTools({ tools: TOOLS, session: scope, deferred: true });
    const read: Array<{ type: string; value: unknown }> = [];
    const { model, offered } = scriptedModel([
      () => [call('aptix_find_tools', { query: 'multiply two numbers', sessionId: null, limit: 2 }, 'c1')],
      (options) => {
        read.push(lastToolOutput(options));
        return [
          call(
            'aptix_call_tool',
            { name: 'testing_calculator', arguments: { operation: 'multiply', a: 6, b: 7 } },
            'c2',
          ),
        ];
      },
      (options) => {
        read.push(lastToolOutput(options));
        return [
          call(
            'aptix_call_tool',
            {
              name: 'testing_calculator',
              arguments: { operation: 'multiply', a: 'six', b: 7 },
              sessionId: scope.sessionId,
            },
            'c3',
          ),
        ];
      },
      (options) => {
        read.push(lastToolOutput(options));
        return [
          call(
            'aptix_call_tool',
            { name: 'testing_calculator', arguments: { operation: 'add', a: 1, b: 2 }, sessionId: 'another-session' },
            'c4',
          ),
        ];
      },
      (options) => {
        read.push(lastToolOutput(options));
        return [text('42')];
      },
    ]);

    const result = await generateText({
      model,
      tools: aptix.tools,
      prepareStep: aptix.prepareStep,
      stopWhen: stepCountIs(6),
      prompt: 'What is 6 times 7?',
    });

    expect(result.text).toBe('42');
    expect(offered[0]).toEqual(OFFERED);
    const [found, product, invalid, elsewhere] = read;
    expect(found).toMatchObject({
      type: 'json',
      value: {
        mode: 'general',
        sessionId: scope.sessionId,
        tools: [{ name: 'testing_calculator', usage: expect.stringContaining('testing_calculator') }],
      },
    });
    expect(product).toEqual({
      type: 'json',
      value: { value: 42, expression: '6 * 7 = 42', sessionId: scope.sessionId, conversationId: null },
    });
    expect(invalid!.type).toBe('error-text');
    expect(JSON.parse(invalid!.value as string)).toMatchObject({
      error: { code: 'INVALID_ARGUMENTS', message: expect.stringContaining("'a'") },
    });
    expect(JSON.parse(elsewhere!.value as string)).toEqual({
      error: {
        code: 'SESSION_MISMATCH',
        message: `aptix_call_tool was not run: it names session "another-session", but this agent works in session ${scope.sessionId}. Leave sessionId out: calls run in the agent's session.`,
      },
    });
    const guidance = await aptix.guidance();
    expect(guidance).toMatch(/^# Finding tools\nThis mode offers 2 tools that are not listed to you\./);
    expect(guidance).toContain('<tool_guidance name="agent_change_mode">');
    expect(guidance).not.toContain('<tool_guidance name="testing_calculator">');
  });

  it('refuses a tool the mode does not offer, saying what to do; after agent_change_mode through aptix_call_tool, the next find sees the new mode', async () => {
    const scope = await sessions.newSession('general');
    const aptix = await createAiSdkTools({ tools: TOOLS, session: scope, deferred: ['general', 'tool_diagnostics'] });
    const read: Array<{ type: string; value: unknown }> = [];
    const { model, offered } = scriptedModel([
      () => [call('aptix_call_tool', { name: 'testing_ping_pong', arguments: { message: 'hi' } }, 'c1')],
      (options) => {
        read.push(lastToolOutput(options));
        return [
          call(
            'aptix_call_tool',
            {
              name: 'agent_change_mode',
              arguments: { mode: 'tool_diagnostics', branch: false, reason: 'The user wants to test tools.' },
            },
            'c2',
          ),
        ];
      },
      () => [call('aptix_find_tools', { query: 'ping', sessionId: null, limit: null }, 'c3')],
      (options) => {
        read.push(lastToolOutput(options));
        return [call('aptix_call_tool', { name: 'testing_ping_pong', arguments: { message: 'hi', count: 2 } }, 'c4')];
      },
      (options) => {
        read.push(lastToolOutput(options));
        return [text('pong')];
      },
    ]);

    await generateText({
      model,
      tools: aptix.tools,
      prepareStep: aptix.prepareStep,
      stopWhen: stepCountIs(6),
      prompt: 'ping me',
    });

    const [refused, found, pong] = read;
    expect(JSON.parse(refused!.value as string)).toEqual({
      error: {
        code: 'TOOL_NOT_IN_MODE',
        message:
          `Tool "testing_ping_pong" is not offered in mode "general" (session ${scope.sessionId}); ` +
          `it was not run. Find this mode's tools with aptix_find_tools. "testing_ping_pong" is ` +
          `offered in mode "tool_diagnostics": switch with agent_change_mode once the user agrees, ` +
          `then call it again.`,
      },
    });
    expect((await sessions.store.getSession(scope.sessionId))!.mode).toBe('tool_diagnostics');
    expect(offered[2]).toEqual(OFFERED);
    expect(found).toMatchObject({
      type: 'json',
      value: { mode: 'tool_diagnostics', total: 8, tools: [expect.objectContaining({ name: 'testing_ping_pong' })] },
    });
    expect(pong).toMatchObject({ type: 'json', value: { reply: 'pong pong: hi', sessionId: scope.sessionId } });
  });

  it("a call through aptix_call_tool stopped by the AI SDK's tool time-out is a TIMEOUT failure, as a direct one", async () => {
    const aptix = await createAiSdkTools({ tools: [samples], deferred: true });
    let readBack: { type: string; value: unknown } | undefined;
    const { model } = scriptedModel([
      () => [call('aptix_call_tool', { name: 'testing_delay', arguments: { milliseconds: 60_000 } })],
      (options) => {
        readBack = lastToolOutput(options);
        return [text('It took too long.')];
      },
    ]);
    await generateText({
      model,
      tools: aptix.tools,
      stopWhen: stepCountIs(3),
      timeout: { toolMs: 50 },
      prompt: 'wait a minute',
    });
    expect(JSON.parse(readBack!.value as string)).toMatchObject({
      error: { code: 'TIMEOUT', message: expect.stringContaining('testing_delay') },
    });
  });

  it("with toolApproval, a gated call through aptix_call_tool waits for a person's approval, and runs once approved", async () => {
    const aptix = await createAiSdkTools({ tools: [samples], deferred: true });
    const refund = { name: 'testing_issue_refund', arguments: { orderId: 'A-1', amount: 500, currency: 'EUR' } };
    let readBack: { type: string; value: unknown } | undefined;
    const { model, offered } = scriptedModel([
      () => [call('aptix_call_tool', refund, 'r1')],
      (options) => {
        readBack = lastToolOutput(options);
        return [text('Refunded.')];
      },
    ]);
    const prompt: ModelMessage[] = [{ role: 'user', content: 'Refund 500 EUR on order A-1.' }];
    const first = await generateText({
      model,
      tools: aptix.tools,
      toolApproval: aptix.toolApproval,
      stopWhen: stepCountIs(3),
      messages: prompt,
    });
    expect(offered[0]).toEqual(['aptix_find_tools', 'aptix_call_tool']);
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    expect(request).toMatchObject({ toolCall: { toolCallId: 'r1', toolName: 'aptix_call_tool' } });
    expect(first.steps[0]!.toolResults).toEqual([]); // nothing ran: the run waits for a person
    expect(
      await aptix.toolApproval({
        toolCall: { toolName: 'aptix_call_tool', input: { ...refund, arguments: { ...refund.arguments, amount: 20 } } },
      }),
    ).toBe('not-applicable');

    const approval: ModelMessage = {
      role: 'tool',
      content: [{ type: 'tool-approval-response', approvalId: request!.approvalId, approved: true }],
    };
    const second = await generateText({
      model,
      tools: aptix.tools,
      toolApproval: aptix.toolApproval,
      stopWhen: stepCountIs(3),
      messages: [...prompt, ...first.response.messages, approval],
    });
    expect(second.text).toBe('Refunded.');
    expect(readBack).toMatchObject({ type: 'json', value: { orderId: 'A-1', amount: 500, currency: 'EUR' } });
  });
});
