import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
} from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';

export type Turn = (options: LanguageModelV4CallOptions) => LanguageModelV4Content[];

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model that plays `turns` in order, through the AI SDK's own mock; it records what each step was offered. */
export function scriptedModel(turns: Turn[]) {
  const offered: string[][] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async (options): Promise<LanguageModelV4GenerateResult> => {
      options.abortSignal?.throwIfAborted(); // as a real provider's fetch would
      offered.push((options.tools ?? []).map((tool) => tool.name));
      const turn = turns[offered.length - 1];
      if (turn === undefined) throw new Error(`the script has no step ${offered.length}`);
      const content = turn(options);
      const calls = content.some((part) => part.type === 'tool-call');
      return {
        content,
        finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined },
        usage: USAGE,
        warnings: [],
      };
    },
  });
  return { model, offered };
}

export const call = (toolName: string, input: unknown, id = `call-${toolName}`): LanguageModelV4Content => ({
  type: 'tool-call',
  toolCallId: id,
  toolName,
  input: JSON.stringify(input),
});
export const text = (value: string): LanguageModelV4Content => ({ type: 'text', text: value });

/** The output the model read back for its last tool call, from the prompt of the step after it. */
export function lastToolOutput(options: LanguageModelV4CallOptions): { type: string; value: unknown } {
  const message = options.prompt.at(-1)!;
  if (message.role !== 'tool') throw new Error(`the last message is a ${message.role} message, not a tool result`);
  const part = message.content.at(-1)!;
  if (part.type !== 'tool-result') throw new Error('no tool result');
  return part.output as { type: string; value: unknown };
}
