import type { Static, TObject } from 'typebox';
import type { ContentBlock } from './content.js';
import type { ToolInputChannel } from './input-required.js';
import type { InvokeFailure } from './invoke-result.js';

/**
 * Prompts: messages a package offers its users (MCP clients show them as slash commands), typed by a
 * TypeBox schema of string arguments. See {@link definePrompt}.
 */

/** One message a prompt renders, in MCP's `PromptMessage` shape. */
export interface PromptMessage {
  readonly role: 'user' | 'assistant';
  /** A text, image, audio or embedded-resource block (build it with `Content`). */
  readonly content: ContentBlock;
}

/** What a prompt's `render`, and any `complete` function, knows of the request. */
export interface UnitContext {
  /** Aborts when the client goes away or the host's time limit passes: stop work then. */
  readonly signal: AbortSignal;
  /** The agent session the request works in, when there is one. */
  readonly sessionId?: string;
  /** The mode the request sees prompts and resources of. */
  readonly mode?: string;
  /**
   * `render` only: asking the client before the prompt renders, as a tool asks (return
   * `InvokeResult.inputRequired(…)`): its user, its model, its roots. Present when the caller is an MCP
   * client that can answer, with the answers and the prompt's state on the request that continues a round.
   */
  readonly input?: ToolInputChannel;
}

/**
 * What `render` returns: a text (one user message), one message, a list of them, or
 * `InvokeResult.inputRequired(…)` when it needs the client's answers first (see {@link UnitContext.input}).
 */
export type PromptRenderOutput = string | PromptMessage | readonly PromptMessage[] | InvokeFailure;

/** The arguments a completion request has already filled in (MCP's `context.arguments`). */
export interface CompletionContext extends UnitContext {
  readonly arguments: Readonly<Record<string, string>>;
}

/** Suggests values for one argument from what the user typed so far; the host keeps the first 100. */
export type CompleteFunction = (
  value: string,
  context: CompletionContext,
) => readonly string[] | Promise<readonly string[]>;

/** The argument of {@link definePrompt}. */
export interface PromptDefinition<TName extends string, TArgs extends TObject> {
  /** lowercase_snake_case, at most 64 characters: the tool name rule. */
  readonly name: TName;
  /** A short human-readable name, shown by clients; defaults to the name. */
  readonly title?: string;
  /** One sentence saying what the prompt is for. */
  readonly description: string;
  /**
   * The arguments, a TypeBox object of strings (MCP prompt arguments are strings): `Type.String`, a
   * union of string literals, or `Type.Optional` of either; each with a description.
   */
  readonly args?: TArgs;
  /** The modes whose sessions see the prompt, by key; left out, every mode does. */
  readonly modes?: readonly string[];
  /** Completions for arguments by name; a union of literals completes from the schema without one. */
  readonly complete?: { readonly [K in keyof Static<TArgs>]?: CompleteFunction };
  /** The messages, from validated arguments. A throw or a time-out fails this request only. */
  render(args: Static<TArgs>, context: UnitContext): PromptRenderOutput | Promise<PromptRenderOutput>;
}

/** A prompt made by {@link definePrompt} (or written as a plain object of this shape): list it in a package's `prompts`. */
export interface DefinedPrompt<TName extends string = string, TArgs extends TObject = TObject> extends PromptDefinition<
  TName,
  TArgs
> {
  readonly kind: 'prompt';
}

/**
 * Types a package's prompt list, so each entry is checked at compile time.
 * @example export const prompts = [SummarizePrompt] as const satisfies PromptList;
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type PromptList = readonly DefinedPrompt<string, any>[];

/**
 * Defines a prompt. The host checks it as it checks tools (the name rule, string-only arguments with
 * descriptions, a render function) when the package loads, validates each request's arguments against
 * `args`, and bounds `render` in time and size.
 *
 * @example
 * export const SummarizePrompt = definePrompt({
 *   name: 'acme_summarize',
 *   description: 'Asks for a summary of a text in a given tone.',
 *   args: Type.Object({
 *     text: Type.String({ description: 'The text to summarize.' }),
 *     tone: Type.Optional(Type.Union([Type.Literal('plain'), Type.Literal('formal')], { description: 'The tone.' })),
 *   }),
 *   render: ({ text, tone }) => `Summarize in a ${tone ?? 'plain'} tone:\n\n${text}`,
 * });
 */
export function definePrompt<const TName extends string, TArgs extends TObject>(
  definition: PromptDefinition<TName, TArgs>,
): DefinedPrompt<TName, TArgs> {
  return Object.freeze({ ...definition, kind: 'prompt' as const });
}
