import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { EchoTool } from '../test/fixtures/tools.js';
import { CapturingAdminLogger } from './admin-logger.js';
import type { AgentToolExecutionContext, ToolDependencies } from './agent-tool.js';
import { acceptedAnswer, inputNeededProblem, type ToolInputChannel } from './input-required.js';
import { InvokeResult } from './invoke-result.js';
import { functionToolSchema } from './schema.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool } from './typed-agent-tool.js';
import { usage } from './usage.js';

const NoArgs = Type.Object({}, { additionalProperties: false });
let asked: unknown = {
  inputRequests: {
    who: {
      method: 'elicitation/create',
      params: { message: 'Who?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
    },
  },
  state: { step: 1 },
};

/** Greets the name the user gave; asks for it (with whatever `asked` holds) until then. */
class AskingTool extends TypedAgentTool<typeof NoArgs> {
  static readonly ToolName = 'test_asking';
  static readonly ToolUsageMetadata = usage`
    test_asking — Usage Guide

    Primary purpose:
    - Ask the user a name.
  `;
  static getSchema() {
    return functionToolSchema(AskingTool.ToolName, 'Asks the user a name.', NoArgs);
  }
  constructor({ logger }: ToolDependencies) {
    super(NoArgs, logger);
  }
  protected run(_args: object, context: AgentToolExecutionContext) {
    const name = acceptedAnswer(context.input, 'who')?.name;
    if (typeof name === 'string') return { hello: name, state: context.input?.state ?? null };
    return {
      successful: false,
      result: null,
      errors: [{ message: 'needs a name', code: 'INPUT_REQUIRED' }],
      inputRequired: asked,
    } as never;
  }
}

function setup() {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools([AskingTool, EchoTool]);
  return { logger, executor: new AgentToolExecutor({ registry, logger }) };
}
const channel = (input: Partial<ToolInputChannel>): ToolInputChannel => ({ canAsk: true, responses: {}, ...input });

describe('questions to the user (InvokeResult.inputRequired)', () => {
  it('passes the questions on to a caller that can ask, and gives the tool the answer and its state on the retry', async () => {
    const { executor } = setup();
    const first = await executor.execute('test_asking', {}, { input: channel({}) });
    expect(first.successful).toBe(false);
    expect(!first.successful && first.inputRequired).toEqual(asked);
    const second = await executor.execute(
      'test_asking',
      {},
      { input: channel({ responses: { who: { action: 'accept', content: { name: 'Ada' } } }, state: { step: 1 } }) },
    );
    expect(second.successful && JSON.parse(second.result)).toEqual({ hello: 'Ada', state: { step: 1 } });
  });

  it('a caller that cannot ask (no channel, or canAsk false) gets a plain INPUT_REQUIRED failure: nothing done', async () => {
    const { executor } = setup();
    for (const context of [{}, { input: channel({ canAsk: false }) }]) {
      const result = await executor.execute('test_asking', {}, context);
      expect(result).toEqual({
        successful: false,
        result: null,
        errors: [{ message: 'needs a name', code: 'INPUT_REQUIRED' }],
      });
    }
  });

  it('a declined, cancelled or malformed answer is no answer', () => {
    for (const answer of [
      { action: 'decline' },
      { action: 'cancel' },
      { action: 'accept', content: ['Ada'] },
      12345,
      null,
      { action: 'accept' },
    ]) {
      expect(acceptedAnswer(channel({ responses: { who: answer } }), 'who')).toBeUndefined();
    }
  });

  it('refuses malformed questions as a malformed result naming the problem', async () => {
    const { executor, logger } = setup();
    const cases: Array<[unknown, string]> = [
      [{ inputRequests: {} }, '1 to 8 questions'],
      [{ inputRequests: { q: { method: 'tools/call', params: {} } } }, 'must be "elicitation/create"'],
      [{ inputRequests: { q: { method: 'sampling/createMessage', params: {} } } }, 'params.messages must hold'],
      [
        {
          inputRequests: {
            q: {
              method: 'elicitation/create',
              params: { message: ' ', requestedSchema: { type: 'object', properties: {} } },
            },
          },
        },
        'params.message',
      ],
      [
        {
          inputRequests: {
            q: { method: 'elicitation/create', params: { message: 'x', requestedSchema: { type: 'string' } } },
          },
        },
        'requestedSchema',
      ],
      [
        {
          inputRequests: {
            q: {
              method: 'elicitation/create',
              params: { message: 'x', requestedSchema: { type: 'object', properties: {} } },
            },
          },
          state: 'x'.repeat(9000),
        },
        'over the limit of 8192',
      ],
      ['not an object', 'not an object'],
    ];
    for (const [value, expected] of cases) {
      asked = value;
      const result = await executor.execute('test_asking', {}, { input: channel({}) });
      expect(result.successful).toBe(false);
      expect(result.errors[0]).toMatchObject({ code: 'MALFORMED_RESULT' });
      expect(result.errors[0]!.message).toContain(expected);
      expect(inputNeededProblem(value)).toContain(expected);
    }
    expect(logger.entries.some((entry) => entry.tag === '[test_asking_ExecuteAsync__MalformedResult]')).toBe(true);
  });

  it('InvokeResult.inputRequired builds the failure with the questions', () => {
    const needed = {
      inputRequests: {
        q: {
          method: 'elicitation/create' as const,
          params: {
            message: 'Sure?',
            requestedSchema: { type: 'object' as const, properties: { ok: { type: 'boolean' } } },
          },
        },
      },
    };
    expect(InvokeResult.inputRequired(needed)).toMatchObject({
      successful: false,
      errors: [{ code: 'INPUT_REQUIRED' }],
      inputRequired: needed,
    });
    expect(inputNeededProblem(needed)).toBeUndefined();
  });
});
