import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import type { AgentToolExecutionContext, ToolDependencies } from './agent-tool.js';
import { CapturingAdminLogger } from './admin-logger.js';
import { acceptedAnswer, inputNeededProblem, type ToolInputChannel, type ToolInputNeeded } from './input-required.js';
import { InvokeResult } from './invoke-result.js';
import {
  listedRoots,
  MAX_CLIENT_ROOTS,
  rootsRequest,
  sampledText,
  samplingRequest,
  type SamplingInputRequest,
} from './sampling-and-roots.js';
import { functionToolSchema } from './schema.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool } from './typed-agent-tool.js';
import { usage } from './usage.js';

const NoArgs = Type.Object({}, { additionalProperties: false });
let needs: ToolInputNeeded = { inputRequests: {} };

/** Answers with what the client gave (the model's text, the roots, the user's answer); asks `needs` until then. */
class AskingClientTool extends TypedAgentTool<typeof NoArgs> {
  static readonly ToolName = 'test_asking_client';
  static readonly ToolUsageMetadata = usage`
    test_asking_client — Usage Guide

    Primary purpose:
    - Ask the client's model, its roots or its user.
  `;
  static getSchema() {
    return functionToolSchema(AskingClientTool.ToolName, "Asks the client's model, roots or user.", NoArgs);
  }
  constructor({ logger }: ToolDependencies) {
    super(NoArgs, logger);
  }
  protected run(_args: object, context: AgentToolExecutionContext) {
    const text = sampledText(context.input, 'model');
    const roots = listedRoots(context.input, 'roots');
    if (text !== undefined || roots !== undefined)
      return { text: text ?? null, roots: roots ?? null, who: acceptedAnswer(context.input, 'who')?.name ?? null };
    return InvokeResult.inputRequired(needs);
  }
}

function setup() {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools([AskingClientTool]);
  return new AgentToolExecutor({ registry, logger });
}
const channel = (input: Partial<ToolInputChannel>): ToolInputChannel => ({
  canAsk: true,
  canSample: true,
  canListRoots: true,
  responses: {},
  ...input,
});
const question = {
  method: 'elicitation/create' as const,
  params: { message: 'Who?', requestedSchema: { type: 'object' as const, properties: { name: { type: 'string' } } } },
};

describe("requests to the client's model and roots (sampling, roots/list)", () => {
  it('passes a sampling request and a roots request on to a caller that can answer both, and the tool reads the answers on the retry', async () => {
    const executor = setup();
    needs = {
      inputRequests: { model: samplingRequest('Capital of France?', { maxTokens: 100 }), roots: rootsRequest() },
    };
    const first = await executor.execute('test_asking_client', {}, { input: channel({}) });
    expect(!first.successful && first.inputRequired).toEqual({
      inputRequests: {
        model: {
          method: 'sampling/createMessage',
          params: {
            maxTokens: 100,
            messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }],
          },
        },
        roots: { method: 'roots/list', params: {} },
      },
    });
    const second = await executor.execute(
      'test_asking_client',
      {},
      {
        input: channel({
          responses: {
            model: { role: 'assistant', content: { type: 'text', text: 'Paris.' }, model: 'm', stopReason: 'endTurn' },
            roots: { roots: [{ uri: 'file:///work', name: 'Work' }, { uri: 'file:///tmp' }] },
          },
        }),
      },
    );
    expect(second.successful && JSON.parse(second.result)).toEqual({
      text: 'Paris.',
      roots: [{ uri: 'file:///work', name: 'Work' }, { uri: 'file:///tmp' }],
      who: null,
    });
  });

  it('a caller that cannot sample or list roots (no channel, or a client without the capability) gets SAMPLING_UNAVAILABLE or ROOTS_UNAVAILABLE saying what to do, and no requests', async () => {
    const executor = setup();
    needs = { inputRequests: { model: samplingRequest('Hi', { maxTokens: 5 }) } };
    for (const context of [{}, { input: channel({ canSample: false }) }, { input: { canAsk: true, responses: {} } }]) {
      const result = await executor.execute('test_asking_client', {}, context);
      expect(result).toEqual({
        successful: false,
        result: null,
        errors: [
          {
            code: 'SAMPLING_UNAVAILABLE',
            message:
              "test_asking_client needs a completion from the client's model (MCP sampling), and this " +
              'caller cannot give one, so nothing was done. Call it from an MCP client that declares the ' +
              'sampling capability.',
          },
        ],
      });
    }
    needs = { inputRequests: { roots: rootsRequest() } };
    const roots = await executor.execute('test_asking_client', {}, { input: channel({ canListRoots: false }) });
    expect(roots.errors).toEqual([
      {
        code: 'ROOTS_UNAVAILABLE',
        message:
          "test_asking_client needs the client's roots (MCP roots/list), and this caller cannot list them, so nothing was done. Call it from an MCP client that declares the roots capability.",
      },
    ]);
    expect(roots).not.toHaveProperty('inputRequired');
  });

  it('a round the caller can answer only in part is not sent at all: every missing kind is named, in a fixed order', async () => {
    const executor = setup();
    needs = { inputRequests: { roots: rootsRequest(), who: question, model: samplingRequest('Hi', { maxTokens: 5 }) } };
    const result = await executor.execute(
      'test_asking_client',
      {},
      { input: channel({ canAsk: false, canSample: false }) },
    );
    expect(result).not.toHaveProperty('inputRequired');
    expect(result.errors.map((error) => error.code)).toEqual(['INPUT_REQUIRED', 'SAMPLING_UNAVAILABLE']);
  });

  it('refuses malformed sampling and roots requests as a malformed result naming the problem', async () => {
    const executor = setup();
    const text = { role: 'user', content: { type: 'text', text: 'x' } };
    const sampling = (params: unknown) => ({ inputRequests: { q: { method: 'sampling/createMessage', params } } });
    const cases: Array<[unknown, string]> = [
      [sampling(undefined), 'params must be an object'],
      [sampling({ messages: [], maxTokens: 5 }), 'params.messages must hold 1 to 64'],
      [sampling({ messages: Array(65).fill(text), maxTokens: 5 }), 'params.messages must hold 1 to 64'],
      [sampling({ messages: 'hi', maxTokens: 5 }), 'params.messages must hold'],
      [sampling({ messages: [{ ...text, role: 'system' }], maxTokens: 5 }), 'messages[0] role must be'],
      [sampling({ messages: [text, { role: 'user', content: 'hi' }], maxTokens: 5 }), 'messages[1] content must be'],
      [sampling({ messages: [{ role: 'user', content: { type: 'text' } }], maxTokens: 5 }), 'content.text must be'],
      [sampling({ messages: [{ role: 'user', content: { type: 'image', data: 'x' } }], maxTokens: 5 }), 'mimeType'],
      [sampling({ messages: [{ role: 'user', content: { type: 'video' } }], maxTokens: 5 }), 'content.type must be'],
      [sampling({ messages: [text] }), 'maxTokens must be a positive whole number'],
      [sampling({ messages: [text], maxTokens: 0 }), 'maxTokens must be'],
      [sampling({ messages: [text], maxTokens: 1.5 }), 'maxTokens must be'],
      [sampling({ messages: [text], maxTokens: '100' }), 'maxTokens must be'],
      [sampling({ messages: [text], maxTokens: 5, tools: [] }), 'params.tools is not a sampling parameter'],
      [sampling({ messages: [text], maxTokens: 5, __proto__: { x: 1 }, ['constructor']: 1 }), 'params.constructor'],
      [sampling({ messages: [text], maxTokens: 5, includeContext: 'everything' }), 'includeContext must be'],
      [sampling({ messages: [text], maxTokens: 5, temperature: Number.NaN }), 'temperature must be a number'],
      [sampling({ messages: [text], maxTokens: 5, stopSequences: [1] }), 'stopSequences must be'],
      [sampling({ messages: [text], maxTokens: 5, systemPrompt: 7 }), 'systemPrompt must be text'],
      [sampling({ messages: [text], maxTokens: 5, metadata: [] }), 'metadata must be an object'],
      [{ inputRequests: { q: { method: 'roots/list', params: { all: true } } } }, 'roots/list takes no parameters'],
      [{ inputRequests: { q: { method: 'roots/list', params: [] } } }, 'roots/list takes no parameters'],
    ];
    for (const [value, expected] of cases) {
      needs = value as ToolInputNeeded;
      const result = await executor.execute('test_asking_client', {}, { input: channel({}) });
      expect(result.errors[0], expected).toMatchObject({ code: 'MALFORMED_RESULT' });
      expect(result.errors[0]!.message).toContain(expected);
      expect(inputNeededProblem(value)).toContain(expected);
    }
    const full: SamplingInputRequest = samplingRequest([text as never], {
      maxTokens: 10,
      systemPrompt: 'Be brief.',
      temperature: 0.2,
      stopSequences: ['\n'],
      modelPreferences: { hints: [{ name: 'claude' }] },
      includeContext: 'none',
      metadata: { why: 'test' },
    });
    expect(inputNeededProblem({ inputRequests: { q: full, r: { method: 'roots/list' } } })).toBeUndefined();
  });

  it("reads the model's text from a single block or a list of blocks, and nothing from an answer without text", () => {
    const read = (answer: unknown) => sampledText({ responses: { m: answer } }, 'm');
    expect(read({ role: 'assistant', content: { type: 'text', text: 'One.' } })).toBe('One.');
    expect(
      read({
        content: [
          { type: 'text', text: 'One.' },
          { type: 'image', data: 'AA==', mimeType: 'image/png' },
          { type: 'text', text: 'Two.' },
        ],
      }),
    ).toBe('One.\nTwo.');
    for (const answer of [
      undefined,
      null,
      'Paris',
      42,
      [],
      {},
      { content: { type: 'image', data: 'AA==', mimeType: 'image/png' } },
      { content: { type: 'text', text: 5 } },
      { content: 'Paris' },
    ])
      expect(read(answer)).toBeUndefined();
    expect(sampledText(undefined, 'm')).toBeUndefined();
  });

  it('reads only file:// roots, at most MAX_CLIENT_ROOTS of them, and nothing from an answer that is not a roots list', () => {
    const read = (answer: unknown) => listedRoots({ responses: { r: answer } }, 'r');
    expect(
      read({
        roots: [
          { uri: 'file:///a', name: 'A' },
          { uri: 'https://example.com/b' },
          { uri: 'FILE:///c' },
          { name: 'no uri' },
          null,
          'file:///d',
          { uri: 'file:///e', name: 5 },
        ],
      }),
    ).toEqual([{ uri: 'file:///a', name: 'A' }, { uri: 'file:///e' }]);
    const many = read({ roots: Array.from({ length: 100_000 }, (_, i) => ({ uri: `file:///r${i}` })) });
    expect(many).toHaveLength(MAX_CLIENT_ROOTS);
    for (const answer of [undefined, null, [], {}, { roots: 'file:///a' }, { roots: {} }])
      expect(read(answer)).toBeUndefined();
    expect(read({ roots: [] })).toEqual([]);
  });
});
