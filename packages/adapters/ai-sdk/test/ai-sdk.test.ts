import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { AgentToolRegistry, ToolContractError } from '@aptix/tool-contract';
import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openScratchSessions, type ScratchSessions } from '@aptix/adapter-core/testing';
import { AptixToolError, createAiSdkTools } from '../src/index.js';
import { call, lastToolOutput, scriptedModel, text } from './scripted-model.js';

describe('@aptix/ai-sdk through generateText', () => {
  let sessions: ScratchSessions;
  beforeAll(async () => void (sessions = await openScratchSessions()));
  afterAll(() => sessions.close());

  it("runs the model's tool call through the Aptix tool and gives the model its result", async () => {
    const { tools } = await createAiSdkTools({ tools: [samples], conversationId: 'conv-1' });
    let readBack: unknown;
    const { model } = scriptedModel([
      () => [call('testing_calculator', { operation: 'multiply', a: 6, b: 7 })],
      (options) => {
        readBack = lastToolOutput(options);
        return [text('42')];
      },
    ]);
    const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'What is 6 times 7?' });
    expect(result.text).toBe('42');
    expect(result.steps[0]!.toolResults[0]!.output).toEqual({
      value: 42,
      expression: '6 * 7 = 42',
      sessionId: null,
      conversationId: 'conv-1',
    });
    expect(readBack).toEqual({
      type: 'json',
      value: { value: 42, expression: '6 * 7 = 42', sessionId: null, conversationId: 'conv-1' },
    });
  });

  it('sends the strict view where Aptix allows strict mode, and reads null as "not sent"', async () => {
    const { tools } = await createAiSdkTools({ tools: [samples] });
    let sent: LanguageModelV4CallOptions['tools'];
    const { model } = scriptedModel([
      (options) => {
        sent = options.tools;
        return [call('testing_ping_pong', { message: 'hi', count: null })];
      },
      () => [text('done')],
    ]);
    const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'ping' });
    const ping = sent!.find((tool) => tool.name === 'testing_ping_pong')! as unknown as {
      strict?: boolean;
      inputSchema: { required: string[]; properties: { count: { type: unknown } } };
    };
    expect(ping.strict).toBe(true);
    expect(ping.inputSchema.required).toEqual(['message', 'count']);
    expect(ping.inputSchema.properties.count.type).toEqual(['integer', 'null']);
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ reply: 'pong: hi' });
  });

  it('answers invalid arguments with a tool error naming the field, and the loop goes on', async () => {
    const { tools } = await createAiSdkTools({ tools: [samples] });
    let readBack: { type: string; value: unknown } | undefined;
    const { model } = scriptedModel([
      () => [call('testing_calculator', { operation: 'multiply', a: 'six', b: 7 })],
      (options) => {
        readBack = lastToolOutput(options);
        return [text('Sorry, I sent a bad number.')];
      },
    ]);
    const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'six times seven' });
    expect(result.text).toBe('Sorry, I sent a bad number.');
    const error = result.steps[0]!.content.find((part) => part.type === 'tool-error')!;
    expect(error.error).toBeInstanceOf(AptixToolError);
    expect((error.error as AptixToolError).code).toBe('INVALID_ARGUMENTS');
    expect(readBack!.type).toBe('error-text');
    const payload = JSON.parse(readBack!.value as string) as { error: { message: string; code: string } };
    expect(payload.error.code).toBe('INVALID_ARGUMENTS');
    expect(payload.error.message).toContain("'a'");
  });

  it("a tool's failed result reaches the model with its message and code", async () => {
    const { tools } = await createAiSdkTools({ tools: [samples] });
    let readBack: { type: string; value: unknown } | undefined;
    const { model } = scriptedModel([
      () => [call('testing_calculator', { operation: 'divide', a: 1, b: 0 })],
      (options) => {
        readBack = lastToolOutput(options);
        return [text('Cannot divide by zero.')];
      },
    ]);
    await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: '1/0' });
    expect(JSON.parse(readBack!.value as string)).toMatchObject({ error: { code: 'DIVIDE_BY_ZERO' } });
  });

  it("a tool stopped by the AI SDK's tool time-out is a TIMEOUT failure, and the loop goes on", async () => {
    const { tools } = await createAiSdkTools({ tools: [samples] });
    let readBack: { type: string; value: unknown } | undefined;
    const { model } = scriptedModel([
      () => [call('testing_delay', { milliseconds: 60_000 })],
      (options) => {
        readBack = lastToolOutput(options);
        return [text('It took too long.')];
      },
    ]);
    const result = await generateText({
      model,
      tools,
      stopWhen: stepCountIs(3),
      timeout: { toolMs: 50 },
      prompt: 'wait a minute',
    });
    expect(result.text).toBe('It took too long.');
    expect(JSON.parse(readBack!.value as string)).toMatchObject({ error: { code: 'TIMEOUT' } });
  });

  it("a call the tool's ApprovalPolicy gates is refused with APPROVAL_REQUIRED, and nothing runs", async () => {
    const { tools } = await createAiSdkTools({ tools: [samples] });
    let readBack: { type: string; value: unknown } | undefined;
    const { model } = scriptedModel([
      () => [call('testing_issue_refund', { orderId: 'A-1', amount: 500, currency: 'EUR' })],
      (options) => {
        readBack = lastToolOutput(options);
        return [text('That refund needs approval.')];
      },
    ]);
    const result = await generateText({
      model,
      tools,
      stopWhen: stepCountIs(3),
      prompt: 'Refund 500 EUR on order A-1.',
    });
    expect(result.steps[0]!.toolResults).toEqual([]);
    expect(JSON.parse(readBack!.value as string)).toMatchObject({
      error: { code: 'APPROVAL_REQUIRED', message: expect.stringContaining('500 EUR') },
    });
  });

  it("with toolApproval, a gated call waits for a person's approval, and runs once approved", async () => {
    const aptix = await createAiSdkTools({ tools: [samples] });
    const refund = { orderId: 'A-1', amount: 500, currency: 'EUR' };
    let readBack: { type: string; value: unknown } | undefined;
    const { model } = scriptedModel([
      () => [call('testing_issue_refund', refund, 'r1')],
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
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    expect(request).toMatchObject({ toolCall: { toolCallId: 'r1', toolName: 'testing_issue_refund' } });
    expect(first.steps[0]!.toolResults).toEqual([]); // nothing ran: the run waits for a person
    expect(await aptix.toolApproval({ toolCall: { toolName: 'an_application_tool', input: {} } })).toBe(
      'not-applicable',
    );
    expect(
      await aptix.toolApproval({ toolCall: { toolName: 'testing_issue_refund', input: { ...refund, amount: 20 } } }),
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

  it('cancelling generateText stops the running tool', async () => {
    const { tools } = await createAiSdkTools({ tools: [samples] });
    const controller = new AbortController();
    const { model } = scriptedModel([
      () => [call('testing_delay', { milliseconds: 60_000 })],
      () => [text('never reached')],
    ]);
    let toolOutput: unknown;
    const run = generateText({
      model,
      tools,
      stopWhen: stepCountIs(3),
      abortSignal: controller.signal,
      prompt: 'wait a minute',
      onToolExecutionStart: () => void setImmediate(() => controller.abort()),
      onToolExecutionEnd: (event) => void (toolOutput = event.toolOutput),
    });
    await expect(run).rejects.toThrow();
    // The delay tool saw the abort and stopped at once: AGN-005 §8's successful "cancelled" result.
    expect(toolOutput).toMatchObject({ type: 'tool-result', output: { wasCancelled: true, requestedMs: 60_000 } });
  });

  it("offers the session mode's tools, and the step after agent_change_mode sees the new mode's", async () => {
    const session = await sessions.store.createSession({ mode: 'general', user: 'ada' });
    const aptix = await createAiSdkTools({
      tools: [samples, modeCatalogPackage, modeChangePackage],
      session: { sessionManager: sessions.store, sessionId: session.id, modeCatalog: sessions.catalog },
    });
    expect(await aptix.guidance()).toContain('<tool_guidance name="testing_calculator">');
    expect(await aptix.guidance()).not.toContain('<tool_guidance name="testing_delay">');
    const { model, offered } = scriptedModel([
      () => [call('testing_ping_pong', { message: 'too early' }, 'c1')],
      () => [
        call(
          'agent_change_mode',
          { mode: 'tool_diagnostics', branch: false, reason: 'The user wants to test tools.' },
          'c2',
        ),
      ],
      () => [call('testing_ping_pong', { message: 'hi', count: 2 }, 'c3')],
      () => [text('pong')],
    ]);
    const result = await generateText({
      model,
      tools: aptix.tools,
      prepareStep: aptix.prepareStep,
      stopWhen: stepCountIs(5),
      prompt: 'ping me',
    });

    expect(offered[0]).toEqual(['agent_hello_world', 'testing_calculator', 'agent_list_modes', 'agent_change_mode']);
    // prepareStep's activeTools: the AI SDK itself refuses a tool the mode does not offer, and runs nothing.
    expect(result.steps[0]!.toolResults).toEqual([]);
    expect(String(result.steps[0]!.content.find((part) => part.type === 'tool-error')!.error)).toContain(
      "unavailable tool 'testing_ping_pong'",
    );
    expect(result.steps[1]!.toolResults[0]!.output).toMatchObject({
      success: true,
      mode: 'tool_diagnostics',
      sessionId: session.id,
    });
    expect(offered[2]).toContain('testing_ping_pong');
    expect(offered[2]).toContain('testing_delay');
    expect(result.steps[2]!.toolResults[0]!.output).toMatchObject({ reply: 'pong pong: hi', sessionId: session.id });
    expect((await sessions.store.getSession(session.id))!.mode).toBe('tool_diagnostics');
    expect(await aptix.guidance()).toContain('<tool_guidance name="testing_delay">');
  });

  it('without prepareStep, a tool outside the mode is still refused, by the adapter (TOOL_NOT_IN_MODE)', async () => {
    const session = await sessions.store.createSession({ mode: 'general' });
    const { tools } = await createAiSdkTools({
      tools: [samples, modeCatalogPackage, modeChangePackage],
      session: { sessionManager: sessions.store, sessionId: session.id, modeCatalog: sessions.catalog },
    });
    let readBack: { type: string; value: unknown } | undefined;
    const { model } = scriptedModel([
      () => [call('testing_delay', { milliseconds: 1 })],
      (options) => {
        readBack = lastToolOutput(options);
        return [text('not here')];
      },
    ]);
    const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'wait' });
    expect(result.steps[0]!.toolResults).toEqual([]);
    expect(JSON.parse(readBack!.value as string)).toMatchObject({
      error: { code: 'TOOL_NOT_IN_MODE', message: expect.stringContaining('not offered in mode "general"') },
    });
  });

  it('refuses a tool that breaks the contract at creation, with the message the host gives', async () => {
    class BrokenTool {
      static readonly ToolName = 'Broken Tool';
      static readonly ToolUsageMetadata = 'x';
      static getSchema() {
        return {
          type: 'function',
          name: 'Broken Tool',
          description: 'd',
          parameters: { type: 'object', properties: {}, required: [] },
        };
      }
      readonly name = 'Broken Tool';
      readonly isToolFullyExecutedOnServer = true;
      execute() {
        return Promise.resolve({ successful: true, result: '{}', errors: [] });
      }
    }
    let expected: unknown;
    try {
      new AgentToolRegistry().registerTool(BrokenTool as never);
    } catch (error) {
      expected = error;
    }
    const creation = createAiSdkTools({ tools: [BrokenTool as never] });
    await expect(creation).rejects.toBeInstanceOf(ToolContractError);
    await expect(creation).rejects.toThrow((expected as Error).message);
  });
});
