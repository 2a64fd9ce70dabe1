import {
  AptixToolError,
  createAptixTools,
  failureText,
  type AptixTools,
  type AptixToolsOptions,
} from '@aptix/adapter-core';
import type { InvokeResult, JsonSchema } from '@aptix/tool-contract';
import type { CallbackManagerForToolRun } from '@langchain/core/callbacks/manager';
import { ToolMessage } from '@langchain/core/messages';
import { StructuredTool, ToolInputParsingException, type ToolRunnableConfig } from '@langchain/core/tools';
import { AptixResourceLoader, promptTemplate, type AptixPromptTemplate } from './langchain-units.js';

type ToolCallLike = {
  readonly type?: 'tool_call';
  readonly id?: string;
  readonly name: string;
  readonly args: unknown;
};

function isToolCall(input: unknown): input is ToolCallLike {
  return input !== null && typeof input === 'object' && (input as ToolCallLike).type === 'tool_call' && 'args' in input;
}

/**
 * One Aptix tool as a LangChain `StructuredTool`. Its `schema` is Aptix's JSON schema; the arguments
 * are checked by Aptix's executor (when LangChain's own JSON-schema check refuses them first, the
 * executor still gives the answer, so the model reads Aptix's named-field errors). A failed call
 * answers a tool call with a `ToolMessage` of `status: "error"` whose content is
 * `{"error":{"message","code"}}`; called with plain arguments, it throws an {@link AptixToolError}.
 */
export class AptixStructuredTool extends StructuredTool {
  readonly name: string;
  readonly description: string;
  readonly schema: JsonSchema;
  readonly #aptix: AptixTools;

  constructor(aptix: AptixTools, name: string) {
    super();
    const { description, parameters } = aptix.describe(name, false);
    this.name = name;
    this.description = description;
    this.schema = parameters;
    this.#aptix = aptix;
  }

  /** A tool call gets a `ToolMessage`; plain arguments get the result's JSON text. */
  override async invoke(input: unknown, config?: ToolRunnableConfig): Promise<string | ToolMessage> {
    try {
      return (await super.invoke(input as never, config)) as string | ToolMessage;
    } catch (error) {
      if (!(error instanceof ToolInputParsingException)) throw error;
      // LangChain's check refused the arguments: Aptix's executor answers, with the field it objects to.
      const result = await this.#aptix.call(this.name, isToolCall(input) ? input.args : input, {
        signal: config?.signal,
      });
      return this.#answer(result, isToolCall(input) ? input.id : config?.toolCall?.id);
    }
  }

  protected async _call(
    args: unknown,
    _runManager?: CallbackManagerForToolRun,
    config?: ToolRunnableConfig,
  ): Promise<string | ToolMessage> {
    return this.#answer(await this.#aptix.call(this.name, args, { signal: config?.signal }), config?.toolCall?.id);
  }

  #answer(result: InvokeResult<string>, toolCallId: string | undefined): string | ToolMessage {
    if (result.successful) {
      return toolCallId === undefined
        ? result.result
        : new ToolMessage({ status: 'success', content: result.result, tool_call_id: toolCallId, name: this.name });
    }
    if (toolCallId === undefined) throw new AptixToolError(this.name, result);
    return new ToolMessage({
      status: 'error',
      content: failureText(result),
      tool_call_id: toolCallId,
      name: this.name,
    });
  }
}

/** What `wrapModelCall` needs of LangChain's model request: its tools. */
export interface ModelRequestWithTools {
  readonly tools: ReadonlyArray<unknown>;
}

/** Aptix tools as LangChain tools, with what keeps them in step with the session's mode. */
export interface AptixLangChainTools {
  /** Every tool, for `createAgent({ tools })` or `model.bindTools(tools)`. */
  readonly tools: AptixStructuredTool[];
  /**
   * For a `langchain` agent's middleware (`createMiddleware({ name: 'AptixModes', wrapModelCall })`):
   * before every model call, keeps only the tools the session's current mode offers, so the call after
   * an `agent_change_mode` sees the new mode's tools. Without a session it changes nothing.
   */
  wrapModelCall<R extends ModelRequestWithTools, T>(request: R, handler: (request: R) => T | Promise<T>): Promise<T>;
  /** The names of the tools offered now (the session's mode's, or all). */
  offeredToolNames(): Promise<string[]>;
  /** The `<tool_guidance>` fragment for the offered tools, for your system prompt. */
  guidance(): Promise<string>;
  /**
   * The packages' prompt `name` as a LangChain chat prompt template (its required arguments are the
   * input variables): `prompt(name).pipe(model).invoke({ … })`. @throws {AptixUnitError} no such prompt.
   */
  prompt(name: string): AptixPromptTemplate;
  /** A document loader of the packages' resources: the `uris` given, or every fixed one the mode offers. */
  resourceLoader(uris?: readonly string[]): AptixResourceLoader;
  /** The adapter underneath: the registry, the executor, `call` and `units` (listing, completions). */
  readonly aptix: AptixTools;
}

/**
 * Turns Aptix tool classes and packages into LangChain `StructuredTool`s. The run's signal
 * (`config.signal`, and `config.timeout`) reaches the tool: a cancelled call stops it, and a call the
 * time-out stops is a `TIMEOUT` failure. A failed call becomes a `ToolMessage` with `status: "error"`
 * and the loop goes on.
 *
 * @example
 * const aptix = await createLangChainTools({ tools: [samples] });
 * const agent = createAgent({ model, tools: aptix.tools, systemPrompt: await aptix.guidance() });
 */
export async function createLangChainTools(options: AptixToolsOptions): Promise<AptixLangChainTools> {
  const aptix = await createAptixTools(options);
  const tools = aptix.names().map((name) => new AptixStructuredTool(aptix, name));
  const ours = new Set(aptix.names());
  const named = (tool: unknown) => (tool as { name?: unknown }).name;
  return {
    tools,
    async wrapModelCall(request, handler) {
      if (aptix.session === undefined) return handler(request);
      const offered = new Set(await aptix.offeredToolNames());
      // Only Aptix's tools are scoped by the mode: the application's own tools stay.
      return handler({
        ...request,
        tools: request.tools.filter((tool) => !ours.has(named(tool) as string) || offered.has(named(tool) as string)),
      });
    },
    offeredToolNames: () => aptix.offeredToolNames(),
    guidance: () => aptix.guidance(),
    prompt: (name) => promptTemplate(aptix.units, name),
    resourceLoader: (uris) => new AptixResourceLoader(aptix.units, uris),
    aptix,
  };
}
