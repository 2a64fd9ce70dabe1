import { AptixToolError, createAptixTools, type AptixTools, type AptixToolsOptions } from '@aptix/adapter-core';
import { aiSdkUnits, type AiSdkUnits } from './ai-sdk-units.js';
import { ContentForModel } from './content-output.js';
import {
  jsonSchema,
  tool,
  type JSONSchema7,
  type ModelMessage,
  type Tool,
  type ToolApprovalStatus,
  type ToolSet,
} from 'ai';

export interface AiSdkToolsOptions extends AptixToolsOptions {
  /**
   * Send each tool with `strict: true` and its strict-mode parameters where Aptix's strict-mode report
   * allows it (providers that support strict mode then always produce valid input). Default true.
   */
  readonly strict?: boolean;
}

/** What `prepareStep` returns: the tools the session's current mode offers. */
export interface AptixStepSettings {
  readonly activeTools: string[];
}

/** Aptix tools as an AI SDK `ToolSet`, with what keeps them in step with the session's mode. */
export interface AptixAiSdkTools {
  /** Every tool, for `generateText`/`streamText`'s `tools`. Without a session, all are offered. */
  readonly tools: ToolSet;
  /**
   * For `prepareStep`: before each step, the current mode's tools as `activeTools`, so the step after an
   * `agent_change_mode` sees the new mode's tools. Spread it into your own `prepareStep` if you have one;
   * it names Aptix's tools only, so add the names of any tools of your own.
   */
  readonly prepareStep: () => Promise<AptixStepSettings>;
  /**
   * For `generateText`/`streamText`'s `toolApproval`: asks for a person's approval (`'user-approval'`)
   * where a tool's `ApprovalPolicy` gates the call. Without it, a gated call is refused with
   * `APPROVAL_REQUIRED`; with it, the call runs once your `tool-approval-response` approves it.
   */
  readonly toolApproval: (options: { toolCall: { toolName: string; input: unknown } }) => Promise<ToolApprovalStatus>;
  /** The names of the tools offered now (the session's mode's, or all). */
  activeTools(): Promise<string[]>;
  /** The `<tool_guidance>` fragment for the offered tools, for your `system` prompt. */
  guidance(): Promise<string>;
  /** The packages' prompts as `ModelMessage[]` and resources as message parts, in the session's mode. */
  readonly units: AiSdkUnits;
  /** The adapter underneath: the registry, the executor and `call`. */
  readonly aptix: AptixTools;
}

/**
 * Turns Aptix tool classes and packages into AI SDK tools. Each tool's schema is Aptix's (the strict
 * view when `strict`), its arguments are validated by Aptix's executor (named-field errors), and a
 * failed call throws an {@link AptixToolError}: the AI SDK reports it as a `tool-error` and sends the
 * model `{"error":{"message","code"}}`, and the loop goes on. The call's `abortSignal` (with the AI
 * SDK's `timeout.toolMs`) stops the tool; a time-out is a failure with code `TIMEOUT`.
 *
 * @example
 * import * as samples from '@aptix/tool-samples';
 * const { tools } = await createAiSdkTools({ tools: [samples] });
 * const { text } = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: 'What is 6 times 7?' });
 */
export async function createAiSdkTools(options: AiSdkToolsOptions): Promise<AptixAiSdkTools> {
  const aptix = await createAptixTools(options);
  const strictMode = options.strict ?? true;
  const tools: Record<string, Tool> = {};
  const content = new ContentForModel();
  for (const name of aptix.names()) {
    const { description, parameters, strict } = aptix.describe(name, strictMode);
    const gated = aptix.mayNeedApproval(name);
    tools[name] = tool({
      description,
      // No validate function: the AI SDK passes the model's input through, and Aptix's executor checks it.
      inputSchema: jsonSchema<unknown>(parameters as JSONSchema7),
      ...(strictMode ? { strict } : {}),
      execute: async (
        input: unknown,
        {
          abortSignal,
          toolCallId,
          messages,
        }: { abortSignal?: AbortSignal; toolCallId: string; messages: ModelMessage[] },
      ) => {
        const approved = gated && approvedInHistory(messages, toolCallId);
        const result = await aptix.call(name, input, { signal: abortSignal, approved });
        if (!result.successful) throw new AptixToolError(name, result);
        content.keep(toolCallId, result);
        return JSON.parse(result.result) as unknown;
      },
      // Content blocks reach the model as the AI SDK's content output; other results as their JSON.
      toModelOutput: (options: { toolCallId: string; output: unknown }) => content.toModelOutput(options),
    });
  }
  const activeTools = () => aptix.offeredToolNames();
  return {
    tools,
    toolApproval: async ({ toolCall }) => {
      // Tools of the application's own, in the same ToolSet, are not Aptix's to gate.
      if (!aptix.mayNeedApproval(toolCall.toolName)) return 'not-applicable';
      return (await aptix.approvalFor(toolCall.toolName, toolCall.input)).required ? 'user-approval' : 'not-applicable';
    },
    prepareStep: async () => ({ activeTools: await activeTools() }),
    activeTools,
    guidance: () => aptix.guidance(),
    units: aiSdkUnits(aptix.units),
    aptix,
  };
}

/**
 * Whether the conversation holds a person's approval of this very call: a `tool-approval-response`
 * with `approved: true` answering a `tool-approval-request` for `toolCallId`. The AI SDK runs an
 * approved call only with that evidence in its messages (signed, with `experimental_toolApprovalSecret`).
 */
function approvedInHistory(messages: readonly ModelMessage[], toolCallId: string): boolean {
  const requests = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content)
      if (part.type === 'tool-approval-request' && part.toolCallId === toolCallId) requests.add(part.approvalId);
  }
  return messages.some(
    (message) =>
      message.role === 'tool' &&
      message.content.some(
        (part) => part.type === 'tool-approval-response' && part.approved && requests.has(part.approvalId),
      ),
  );
}
