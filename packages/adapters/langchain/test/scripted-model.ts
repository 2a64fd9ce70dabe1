import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

export type Turn = (messages: BaseMessage[]) => AIMessage;

/** What a scripted model and every copy `bindTools` makes of it share: the turns, and what each call was offered. */
interface Script {
  readonly turns: Turn[];
  readonly offered: string[][];
}

/** A chat model written against LangChain's public BaseChatModel: it plays the script and records the tools bound for each call. */
export class ScriptedChatModel extends BaseChatModel {
  constructor(
    readonly script: Script,
    private readonly bound: readonly string[] = [],
  ) {
    super({});
  }

  _llmType(): string {
    return 'aptix-scripted';
  }

  override bindTools(tools: BindToolsInput[]) {
    return new ScriptedChatModel(
      this.script,
      tools.map((tool) => (tool as { name: string }).name),
    );
  }

  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    options.signal?.throwIfAborted(); // as a real provider's fetch would
    this.script.offered.push([...this.bound]);
    const turn = this.script.turns[this.script.offered.length - 1];
    if (turn === undefined) throw new Error(`the script has no turn ${this.script.offered.length}`);
    const message = turn(messages);
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}

export function scriptedModel(turns: Turn[]) {
  const script: Script = { turns, offered: [] };
  return { model: new ScriptedChatModel(script), offered: script.offered };
}

export const call =
  (name: string, args: Record<string, unknown>, id = `call-${name}`) =>
  () =>
    new AIMessage({ content: '', tool_calls: [{ id, name, args, type: 'tool_call' }] });
export const say = (text: string) => new AIMessage(text);

/** The tool message the model read back for its last call. */
export function lastToolMessage(messages: BaseMessage[]): ToolMessage {
  const message = messages.at(-1);
  if (!ToolMessage.isInstance(message)) throw new Error('the last message is not a tool message');
  return message;
}
