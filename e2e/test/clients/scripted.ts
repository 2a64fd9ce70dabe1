/**
 * A scripted model for the agent loops of the OpenAI Agents SDK, the AI SDK and LangChain. Each step decides the
 * next tool call (or the final answer) from the text blocks of the last tool result, exactly as the
 * framework handed them to its model: a session id, a tool name or an approval id is read there, never
 * passed in by the test. A framework that asks the model once more than the script has steps fails the
 * run, so a loop cannot pass.
 */
import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import {
  Usage,
  setTracingDisabled,
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
} from '@openai/agents';
import { MockLanguageModelV4 } from 'ai/test';

setTracingDisabled(true);

export type Action = { readonly call: string; readonly args: Record<string, unknown> } | { readonly say: string };
/** One step: what the model does, given the text blocks of the last tool result (none at the first step). */
export type Step = (read: readonly string[]) => Action;

/** A run's steps and what each one was offered and read. */
export class Script {
  /** The names of the tools the framework offered the model, per step. */
  readonly offered: string[][] = [];
  /** The tool result text blocks each step read. */
  readonly read: string[][] = [];
  constructor(private readonly steps: readonly Step[]) {}

  next(offered: string[], read: string[]): Action {
    this.offered.push(offered);
    this.read.push(read);
    const step = this.steps[this.read.length - 1];
    if (step === undefined)
      throw new Error(
        `the framework asked the model a ${this.read.length}th time; the script has ${this.steps.length} steps. It last read: ${read.join('\n')}`,
      );
    return step(read);
  }
}

/** A `Model` written against the Agents SDK's public interface (it ships no mock), playing a script. */
export class AgentsScriptedModel implements Model {
  constructor(readonly script: Script) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    request.signal?.throwIfAborted();
    const items = typeof request.input === 'string' ? [] : request.input;
    const last = items.at(-1) as { type?: string; output?: unknown } | undefined;
    const read = last?.type === 'function_call_result' ? agentsTexts(last.output) : [];
    const action = this.script.next(
      request.tools.map((tool) => tool.name),
      read,
    );
    const step = this.script.read.length;
    const output: AgentOutputItem =
      'say' in action
        ? {
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: action.say }],
          }
        : {
            type: 'function_call',
            callId: `call-${step}`,
            name: action.call,
            arguments: JSON.stringify(action.args),
            status: 'completed',
          };
    return { usage: new Usage(), output: [output] };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<StreamEvent> {
    throw new Error('the scripted model does not stream');
  }
}

/** A function_call_result's output as text blocks: the Agents SDK hands an MCP result over as input_text items (or one string). */
function agentsTexts(output: unknown): string[] {
  if (typeof output === 'string') return [output];
  const items = Array.isArray(output) ? output : [output];
  return items.map((item: { type?: string; text?: string }) => {
    if (typeof item?.text !== 'string')
      throw new Error(`a tool result item the script cannot read: ${JSON.stringify(item)}`);
    return item.text;
  });
}

type GenerateOptions = Parameters<MockLanguageModelV4['doGenerate']>[0];
const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** The AI SDK's own `MockLanguageModelV4`, playing a script. */
export function aiSdkScriptedModel(script: Script): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: async (options: GenerateOptions) => {
      options.abortSignal?.throwIfAborted();
      const last = options.prompt.at(-1);
      const part = last?.role === 'tool' ? last.content.at(-1) : undefined;
      const read = part?.type === 'tool-result' ? aiSdkTexts(part.output as { type: string; value: unknown }) : [];
      const action = script.next(
        (options.tools ?? []).map((tool) => tool.name),
        read,
      );
      const step = script.read.length;
      if ('say' in action)
        return {
          content: [{ type: 'text', text: action.say }],
          finishReason: { unified: 'stop', raw: undefined },
          usage: USAGE,
          warnings: [],
        };
      return {
        content: [
          { type: 'tool-call', toolCallId: `call-${step}`, toolName: action.call, input: JSON.stringify(action.args) },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage: USAGE,
        warnings: [],
      };
    },
  });
}

/** A tool-result part's output as text blocks: `@ai-sdk/mcp` hands an MCP result over as `content` (or text/json). */
function aiSdkTexts(output: { type: string; value: unknown }): string[] {
  switch (output.type) {
    case 'content':
      return (output.value as Array<{ type: string; text?: string }>).map((item) => {
        if (item.type !== 'text' || item.text === undefined)
          throw new Error(`a content item the script cannot read: ${JSON.stringify(item)}`);
        return item.text;
      });
    case 'text':
    case 'error-text':
      return [output.value as string];
    default:
      return [JSON.stringify(output.value)];
  }
}

/** A LangChain chat model playing a script (LangChain's FakeToolCallingModel plays fixed calls, which cannot read a result). */
export class LangChainScriptedModel extends BaseChatModel {
  constructor(
    readonly script: Script,
    private readonly offered: string[] = [],
  ) {
    super({});
  }

  _llmType(): string {
    return 'aptix-scripted';
  }

  override bindTools(tools: BindToolsInput[]): LangChainScriptedModel {
    return new LangChainScriptedModel(
      this.script,
      tools.map((tool) => String((tool as { name?: unknown }).name)),
    );
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages.at(-1);
    const read = last !== undefined && ToolMessage.isInstance(last) ? langChainTexts(last.content) : [];
    const action = this.script.next(this.offered, read);
    const message =
      'say' in action
        ? new AIMessage(action.say)
        : new AIMessage({
            content: '',
            tool_calls: [
              { id: `call-${this.script.read.length}`, name: action.call, args: action.args, type: 'tool_call' },
            ],
          });
    return { generations: [{ text: 'say' in action ? action.say : '', message }] };
  }
}

/** A ToolMessage's content as text blocks: `@langchain/mcp-adapters` hands an MCP result over as a string or content blocks. */
function langChainTexts(content: ToolMessage['content']): string[] {
  if (typeof content === 'string') return [content];
  return content.map((block) => {
    const text = (block as { text?: unknown }).text;
    if (typeof text !== 'string') throw new Error(`a content block the script cannot read: ${JSON.stringify(block)}`);
    return text;
  });
}

/** The session id in agent_change_mode's first text block, as a model reads it. */
export function sessionIdIn(read: readonly string[]): string {
  const sessionId = (JSON.parse(read[0] ?? '{}') as { sessionId?: unknown }).sessionId;
  if (typeof sessionId !== 'string') throw new Error(`no sessionId in what the model read: ${read.join('\n')}`);
  return sessionId;
}

const changeTo = (mode: string): Action => ({
  call: 'agent_change_mode',
  args: { mode, branch: false, reason: 'The user wants to try the diagnostics tools.' },
});

/**
 * The scenarios every framework plays. Each answers fresh steps (their state lives in the closure),
 * and `sessionId()` is the session id the model read, for the test to check against the host.
 */
export const scenarios = {
  /** Change mode in one step; find the new mode's tool and run it through the pair in later ones. */
  modeChange() {
    let sessionId: string | undefined;
    const steps: Step[] = [
      () => changeTo('tool_diagnostics'),
      (read) => (
        (sessionId = sessionIdIn(read)),
        { call: 'aptix_find_tools', args: { sessionId, query: 'wait for some milliseconds', limit: 3 } }
      ),
      (read) => ({
        call: 'aptix_call_tool',
        args: {
          sessionId,
          name: (JSON.parse(read[0]!) as { tools: Array<{ name: string }> }).tools[0]!.name,
          arguments: { milliseconds: 1 },
        },
      }),
      (read) => ({ say: `Done: ${read[0]}` }),
    ];
    return { steps, sessionId: () => sessionId };
  },

  /** Invalid arguments, for the tool the pair calls and for the pair itself; then the corrected call. */
  invalidArguments() {
    let sessionId: string | undefined;
    const steps: Step[] = [
      () => changeTo('tool_diagnostics'),
      (read) => (
        (sessionId = sessionIdIn(read)),
        { call: 'aptix_call_tool', args: { sessionId, name: 'testing_delay', arguments: { milliseconds: 'soon' } } }
      ),
      () => ({ call: 'aptix_call_tool', args: { sessionId, tool: 'testing_delay', arguments: { milliseconds: 1 } } }),
      () => ({ call: 'aptix_call_tool', args: { sessionId, name: 'testing_delay', arguments: { milliseconds: 1 } } }),
      (read) => ({ say: `Done: ${read[0]}` }),
    ];
    return { steps, sessionId: () => sessionId };
  },

  /** A gated call through the pair: the model reads the approval id and tells the user it waits. */
  gated(orderId: string) {
    let sessionId: string | undefined;
    const steps: Step[] = [
      () => changeTo('tool_diagnostics'),
      (read) => (
        (sessionId = sessionIdIn(read)),
        {
          call: 'aptix_call_tool',
          args: { sessionId, name: 'testing_issue_refund', arguments: { orderId, amount: 5000, currency: 'EUR' } },
        }
      ),
      (read) => ({
        say: `The refund waits for approval ${/\(approval ([0-9a-f-]{36})\)/.exec(read[0] ?? '')?.[1] ?? '(none read)'}.`,
      }),
    ];
    return { steps, sessionId: () => sessionId };
  },

  /**
   * A call of another mode's tool without a session is refused; the model does what the refusal says
   * (the mode it names, then the pair with the id it gets) and is done: no step repeats.
   */
  followTheRefusal() {
    let sessionId: string | undefined;
    const steps: Step[] = [
      () => ({ call: 'aptix_call_tool', args: { name: 'testing_delay', arguments: { milliseconds: 1 } } }),
      (read) => changeTo(/It is offered in mode "([^"]+)"/.exec(read[0] ?? '')?.[1] ?? '(no mode named)'),
      (read) => (
        (sessionId = sessionIdIn(read)),
        { call: 'aptix_call_tool', args: { sessionId, name: 'testing_delay', arguments: { milliseconds: 1 } } }
      ),
      (read) => ({ say: `Done: ${read[0]}` }),
    ];
    return { steps, sessionId: () => sessionId };
  },
};
