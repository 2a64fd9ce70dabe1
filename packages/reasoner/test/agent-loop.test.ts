import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createReasoner,
  DEFAULT_BOOT_PROMPT,
  ReasonerError,
  ReasonerErrorCode,
  toMessageResponse,
} from '../src/index.js';
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

describe('a turn with a tool call', () => {
  it('runs the call, sends its output back under the same call_id, then returns the answer', async () => {
    const session = await h.store.createSession({ org: 'acme', user: 'ada' });
    h.server.script(
      respond(undefined, call('call_1', 'testing_calculator', { operation: 'add', a: 2, b: 3 })),
      respond('The sum is 5.'),
    );
    const log = eventLog();

    const result = await h.reasoner.runTurn(session.id, 'What is 2 + 3?', { onEvent: log.onEvent });

    expect(result).toMatchObject({
      sessionId: session.id,
      mode: 'general',
      status: 'completed',
      output: 'The sum is 5.',
      steps: 2,
      pendingToolCalls: [],
    });
    expect(result.branchedSessionId).toBeUndefined();
    expect(result.toolCalls).toEqual([
      expect.objectContaining({
        callId: 'call_1',
        name: 'testing_calculator',
        arguments: '{"operation":"add","a":2,"b":3}',
        successful: true,
        sessionId: session.id,
      }),
    ]);
    expect(toMessageResponse(result)).toEqual({
      sessionId: session.id,
      mode: 'general',
      output: 'The sum is 5.',
      status: 'completed',
      toolCalls: [{ name: 'testing_calculator', arguments: '{"operation":"add","a":2,"b":3}', successful: true }],
    });

    // What the SDK sent.
    expect(h.server.requests).toHaveLength(2);
    const [first, second] = h.server.requests.map((request) => request.body);
    expect(h.server.requests[0]!.path).toBe('/v1/responses');
    expect(h.server.requests[0]!.headers.authorization).toBe('Bearer test-key');
    expect(first).toMatchObject({ model: 'test-model', store: false, stream: true });
    expect(first!.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is 2 + 3?' }] },
    ]);
    expect(first!.tools.map((tool) => tool.name)).toEqual(GENERAL_TOOLS);
    for (const tool of first!.tools) {
      expect(tool.type).toBe('function');
      expect(typeof tool.strict).toBe('boolean');
      expect(tool).toEqual({ ...h.registry.definitions('responses', [tool.name])[0] });
    }
    expect(second!.instructions).toBe(first!.instructions);
    expect(second!.input).toEqual([
      first!.input[0],
      {
        type: 'function_call',
        call_id: 'call_1',
        name: 'testing_calculator',
        arguments: '{"operation":"add","a":2,"b":3}',
      },
      { type: 'function_call_output', call_id: 'call_1', output: expect.any(String) },
    ]);
    const output = JSON.parse(second!.input[2]!.output as string);
    expect(output).toEqual({ value: 5, expression: '2 + 3 = 5', sessionId: session.id, conversationId: session.id });

    // What the listener saw.
    expect(log.types().filter((type) => type !== 'text_delta')).toEqual([
      'turn_started',
      'model_request',
      'tool_call_started',
      'tool_call_finished',
      'model_request',
      'turn_ended',
    ]);
    const deltas = log.events.flatMap((event) => (event.type === 'text_delta' ? [event.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('The sum is 5.');
    expect(log.events.at(-1)).toEqual({ type: 'turn_ended', result });

    // What the store kept: the user's message, the call, its output and the answer.
    const items = await h.store.listConversationItems(session.id);
    expect(items.map((item) => (item as { type: string }).type)).toEqual([
      'message',
      'function_call',
      'function_call_output',
      'message',
    ]);
  });

  it("puts the boot prompt, the mode with the others listed, and exactly the offered tools' guidance in the instructions", async () => {
    const session = await h.store.createSession({});
    h.server.script(respond('Hi.'));
    await h.reasoner.runTurn(session.id, 'Hello');
    const { instructions } = h.server.requests[0]!.body;

    expect(instructions.startsWith(DEFAULT_BOOT_PROMPT)).toBe(true);
    expect(instructions).toContain(
      '# Current mode: General (general)\nGENERAL-SUMMARY: answer directly and concisely.',
    );
    expect(instructions).toContain(
      "# Other modes\n- diagnostics (Diagnostics): Exercising the tool pipeline.\n- workspace (Workspace): Editing files on the user's machine.",
    );
    expect(instructions).not.toContain('DIAGNOSTICS-SUMMARY');
    expect(guidanceNames(instructions)).toEqual(GENERAL_TOOLS);
    for (const name of GENERAL_TOOLS) expect(guidanceOf(instructions, name)).toBe(h.registry.get(name)!.usageMetadata);
    const sections = ['# Current mode', '# Other modes', '# Tool guidance'].map((heading) =>
      instructions.indexOf(heading),
    );
    expect([...sections].sort((a, b) => a - b)).toEqual(sections);
  });

  it("sends a failing tool's error back as a payload the model reads, and the model recovers", async () => {
    const session = await h.store.createSession({});
    h.server.script(
      respond(undefined, call('call_fail', 'testing_failure_injection', { mode: 'error', payload: 'run 1' })),
      respond(undefined, call('call_div', 'testing_calculator', { operation: 'divide', a: 1, b: 0 })),
      respond(undefined, call('call_ok', 'testing_calculator', { operation: 'divide', a: 1, b: 4 })),
      respond('1 divided by 4 is 0.25; dividing by 0 is not possible.'),
    );

    const result = await h.reasoner.runTurn(session.id, 'Break something, then divide 1 by 0, then by 4.');

    expect(result.status).toBe('completed');
    expect(result.output).toBe('1 divided by 4 is 0.25; dividing by 0 is not possible.');
    expect(result.toolCalls.map(({ callId, successful }) => [callId, successful])).toEqual([
      ['call_fail', false],
      ['call_div', false],
      ['call_ok', true],
    ]);
    const outputs = h.server.requests[3]!.body.input.filter((item) => item.type === 'function_call_output').map(
      (item) => [item.call_id, JSON.parse(item.output as string)],
    );
    expect(outputs[0]).toEqual([
      'call_fail',
      {
        error: { message: 'testing_failure_injection failed on purpose (mode "error").', code: 'INTENTIONAL_FAILURE' },
      },
    ]);
    expect(outputs[1]![0]).toBe('call_div');
    expect(outputs[1]![1]).toEqual({ error: { message: expect.stringContaining('0'), code: 'DIVIDE_BY_ZERO' } });
    expect(outputs[2]).toEqual(['call_ok', expect.objectContaining({ value: 0.25 })]);
  });

  it('turns a tool exception, malformed arguments and a tool the mode does not offer into error payloads', async () => {
    const session = await h.store.createSession({});
    h.server.script(
      respond(
        undefined,
        call('c_exc', 'testing_failure_injection', { mode: 'exception' }),
        call('c_args', 'testing_calculator', '{"operation":"add","a":2'),
        call('c_mode', 'testing_ping_pong', { message: 'hi' }),
      ),
      respond('Three failures.'),
    );

    await h.reasoner.runTurn(session.id, 'Fail in three ways.');

    const outputs = Object.fromEntries(
      h.server.requests[1]!.body.input.filter((item) => item.type === 'function_call_output').map((item) => [
        item.call_id,
        JSON.parse(item.output as string).error,
      ]),
    );
    expect(outputs.c_exc).toEqual({
      message: 'testing_failure_injection failed to process arguments.',
      code: 'TOOL_EXCEPTION',
    });
    expect(outputs.c_args.code).toBe('INVALID_ARGUMENTS');
    expect(outputs.c_mode).toEqual({
      message: expect.stringContaining('Tool "testing_ping_pong" is not offered in mode "general"'),
      code: 'TOOL_NOT_OFFERED',
    });
  });

  it('runs parallel calls concurrently and appends their outputs in call order', async () => {
    const session = await h.store.createSession({ mode: 'diagnostics' });
    const order: string[] = [];
    const reasoner = createReasoner({
      ...h.options,
      executor: {
        async execute(name, args, context, options) {
          order.push(`start ${name}`);
          const result = await h.executor.execute(name, args, context, options);
          order.push(`end ${name}`);
          return result;
        },
      },
    });
    h.server.script(
      respond(
        undefined,
        call('c_delay', 'testing_delay', { milliseconds: 50 }),
        call('c_ping', 'testing_ping_pong', { message: 'hi', count: 2 }),
      ),
      respond('Done.'),
    );

    await reasoner.runTurn(session.id, 'Wait and ping at once.');

    // Both started before either ended; the quick ping ended first.
    expect(order).toEqual([
      'start testing_delay',
      'start testing_ping_pong',
      'end testing_ping_pong',
      'end testing_delay',
    ]);
    const input = h.server.requests[1]!.body.input;
    expect(input.slice(1).map((item) => [item.type, item.call_id])).toEqual([
      ['function_call', 'c_delay'],
      ['function_call', 'c_ping'],
      ['function_call_output', 'c_delay'],
      ['function_call_output', 'c_ping'],
    ]);
  });

  it("passes the session's context to the tools", async () => {
    const session = await h.store.createSession({ org: 'acme', user: 'ada' });
    const contexts: unknown[] = [];
    const reasoner = createReasoner({
      ...h.options,
      executor: {
        execute(name, args, context, options) {
          contexts.push(context);
          return h.executor.execute(name, args, context, options);
        },
      },
    });
    h.server.script(respond(undefined, call('c1', 'agent_hello_world', { name: 'Ada' })), respond('Hello!'));
    await reasoner.runTurn(session.id, 'Greet me', { conversationId: 'conv-7' });
    expect(contexts).toEqual([
      { sessionId: session.id, conversationId: 'conv-7', org: 'acme', user: 'ada', mode: 'general' },
    ]);
  });
});

describe('the step limit', () => {
  it('ends the turn after maxSteps model calls with a clear message, every call answered, and the next turn continues', async () => {
    const reasoner = createReasoner({ ...h.options, maxSteps: 3 });
    const session = await h.store.createSession({});
    for (let step = 1; step <= 3; step++)
      h.server.script(respond(undefined, call(`c${step}`, 'testing_calculator', { operation: 'add', a: step, b: 1 })));

    const result = await reasoner.runTurn(session.id, 'Keep adding.');

    expect(result.status).toBe('step_limit');
    expect(result.steps).toBe(3);
    expect(result.output).toContain('step limit (maxSteps = 3)');
    expect(result.output).toContain('send another message');
    expect(result.toolCalls.map((toolCall) => toolCall.callId)).toEqual(['c1', 'c2', 'c3']);
    expect(h.server.requests).toHaveLength(3);
    const items = (await h.store.listConversationItems(session.id)) as Array<{ type: string; call_id?: string }>;
    expect(items.at(-1)).toMatchObject({ type: 'function_call_output', call_id: 'c3' });

    h.server.script(respond('Stopping here.'));
    const next = await reasoner.runTurn(session.id, 'continue');
    expect(next.status).toBe('completed');
    const input = h.server.requests[3]!.body.input;
    expect(input.filter((item) => item.type === 'function_call_output').map((item) => item.call_id)).toEqual([
      'c1',
      'c2',
      'c3',
    ]);
    expect(input.at(-1)).toEqual({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'continue' }],
    });
  });
});

describe('cancellation', () => {
  it('stops the tools in flight and makes no further model call', async () => {
    const session = await h.store.createSession({ mode: 'diagnostics' });
    const controller = new AbortController();
    // The real executor, watched: abort once the delay tool is running.
    const reasoner = createReasoner({
      ...h.options,
      executor: {
        execute(name, args, context, options) {
          const running = h.executor.execute(name, args, context, options);
          controller.abort();
          return running;
        },
      },
    });
    h.server.script(
      respond(undefined, call('c_wait', 'testing_delay', { milliseconds: 60_000 })),
      respond('never sent'),
    );

    const result = await reasoner.runTurn(session.id, 'Wait a minute.', { signal: controller.signal });

    expect(result.status).toBe('cancelled');
    expect(result.output).toBe('The turn was cancelled before the agent finished.');
    expect(h.server.requests).toHaveLength(1);
    expect(h.server.remaining).toBe(1);
    // The delay stopped early and said so (AGN-005 §8); the conversation stays valid.
    expect(JSON.parse(result.toolCalls[0]!.output)).toMatchObject({ wasCancelled: true, requestedMs: 60_000 });
    const items = (await h.store.listConversationItems(session.id)) as Array<{ type: string; call_id?: string }>;
    expect(items.at(-1)).toMatchObject({ type: 'function_call_output', call_id: 'c_wait' });
  });

  it("aborts the model request itself, keeps the user's message, and the next turn works", async () => {
    const session = await h.store.createSession({});
    const controller = new AbortController();
    h.server.script({ kind: 'hang' });
    h.server.onRequest = () => controller.abort();

    const result = await h.reasoner.runTurn(session.id, 'First question', { signal: controller.signal });

    expect(result.status).toBe('cancelled');
    expect(result.steps).toBe(1);
    await h.server.requests[0]!.abandoned; // the SDK closed the connection
    h.server.onRequest = undefined;
    h.server.script(respond('Answer.'));
    const next = await h.reasoner.runTurn(session.id, 'Second question');
    expect(next.output).toBe('Answer.');
    expect(h.server.requests[1]!.body.input.map((item) => (item.content as Array<{ text: string }>)[0]!.text)).toEqual([
      'First question',
      'Second question',
    ]);
  });

  it('does not start a turn whose signal is already aborted', async () => {
    const session = await h.store.createSession({});
    const result = await h.reasoner.runTurn(session.id, 'Hello', { signal: AbortSignal.abort() });
    expect(result).toMatchObject({ status: 'cancelled', steps: 0 });
    expect(h.server.requests).toHaveLength(0);
    expect(await h.store.listConversationItems(session.id)).toEqual([]);
  });
});

describe('without streaming', () => {
  it('sends stream: false and still reports the text as one delta', async () => {
    const reasoner = createReasoner({
      ...h.options,
      stream: false,
      modelSettings: { temperature: 0.2, max_output_tokens: 500 },
    });
    const session = await h.store.createSession({});
    h.server.script(respond(undefined, call('c1', 'agent_hello_world', { name: 'Ada' })), respond('Hello, Ada!'));
    const log = eventLog();

    const result = await reasoner.runTurn(session.id, 'Greet Ada', { onEvent: log.onEvent });

    expect(result.output).toBe('Hello, Ada!');
    expect(h.server.requests[0]!.body).toMatchObject({
      stream: false,
      store: false,
      temperature: 0.2,
      max_output_tokens: 500,
    });
    expect(log.events.filter((event) => event.type === 'text_delta')).toEqual([
      { type: 'text_delta', sessionId: session.id, delta: 'Hello, Ada!' },
    ]);
  });
});

describe('endpoint failures', () => {
  it('names the endpoint, the status and what to check when the request is refused', async () => {
    const session = await h.store.createSession({});
    h.server.script({ kind: 'http_error', status: 401, message: 'Incorrect API key provided.' });
    const error = await h.reasoner.runTurn(session.id, 'Hello').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReasonerError);
    expect(error).toMatchObject({ code: ReasonerErrorCode.MODEL_REQUEST_FAILED, httpStatus: 502 });
    expect((error as Error).message).toContain(
      `The model endpoint ${h.server.baseURL} refused the request for model "test-model" with HTTP 401: Incorrect API key provided.`,
    );
    expect((error as Error).message).toContain('Check OPENAI_API_KEY.');
  });

  it('reports a response that failed while streaming', async () => {
    const session = await h.store.createSession({});
    h.server.script({ kind: 'response_failed', message: 'The model crashed.' });
    await expect(h.reasoner.runTurn(session.id, 'Hello')).rejects.toMatchObject({
      code: ReasonerErrorCode.MODEL_RESPONSE_FAILED,
      message: expect.stringContaining('failed to produce a response (server_error): The model crashed.'),
    });
  });

  it('says the endpoint cannot be reached when nothing listens', async () => {
    const closed = await createHarness();
    const { baseURL } = closed.server;
    await closed.close();
    const reasoner = createReasoner({ ...h.options, model: { baseURL, model: 'test-model', maxRetries: 0 } });
    const session = await h.store.createSession({});
    await expect(reasoner.runTurn(session.id, 'Hello')).rejects.toMatchObject({
      code: ReasonerErrorCode.MODEL_REQUEST_FAILED,
      message: expect.stringContaining(`The model endpoint ${baseURL} could not be reached`),
    });
  });
});

describe('turn input', () => {
  it('refuses an empty message and an unknown session with errors that say what to do', async () => {
    await expect(h.reasoner.runTurn('no-such-session', 'Hello')).rejects.toMatchObject({
      code: ReasonerErrorCode.SESSION_NOT_FOUND,
      httpStatus: 404,
    });
    const session = await h.store.createSession({});
    await expect(h.reasoner.runTurn(session.id, '   ')).rejects.toMatchObject({
      code: ReasonerErrorCode.INVALID_INPUT,
      httpStatus: 400,
    });
  });

  it('runs two turns on one session one after the other', async () => {
    const session = await h.store.createSession({});
    h.server.script(respond('First answer.'), respond('Second answer.'));
    const [first, second] = await Promise.all([
      h.reasoner.runTurn(session.id, 'One'),
      h.reasoner.runTurn(session.id, 'Two'),
    ]);
    expect([first.output, second.output]).toEqual(['First answer.', 'Second answer.']);
    // The second request saw the whole first turn.
    expect(h.server.requests[1]!.body.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'One' }] },
      { type: 'message', role: 'assistant', content: 'First answer.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Two' }] },
    ]);
  });

  it('keeps running when an event listener throws, and logs it', async () => {
    const session = await h.store.createSession({});
    h.server.script(respond('Fine.'));
    const result = await h.reasoner.runTurn(session.id, 'Hello', {
      onEvent: () => {
        throw new Error('listener broke');
      },
    });
    expect(result.output).toBe('Fine.');
    expect(h.logger.entries.some((entry) => entry.tag === '[Reasoner_OnEvent__Exception]')).toBe(true);
  });
});
