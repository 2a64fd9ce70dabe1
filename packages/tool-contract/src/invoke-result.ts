import { describeContent, type ContentBlock } from './content.js';
import type { ToolInputNeeded } from './input-required.js';

/** One error carried by a failed {@link InvokeResult}: a message a model or a person can act on, and an optional stable code. */
export interface InvokeError {
  readonly message: string;
  readonly code?: string;
}

/**
 * A successful call: `result` holds the value (for tools, a JSON string). A tool may add `content`,
 * blocks beyond JSON text (images, audio, embedded documents): MCP clients and the Responses API get
 * the blocks, callers that take text only get `result` (see `InvokeResult.withContent`).
 */
export interface InvokeSuccess<T> {
  readonly successful: true;
  readonly result: T;
  readonly errors: readonly InvokeError[];
  readonly content?: readonly ContentBlock[];
}

/** A failed call: no result, one or more errors. */
export interface InvokeFailure {
  readonly successful: false;
  readonly result: null;
  readonly errors: readonly InvokeError[];
  /** The call did not finish because it needs the user's answers first (see `InvokeResult.inputRequired`). */
  readonly inputRequired?: ToolInputNeeded;
}

/**
 * The outcome of a tool call, `InvokeResult<string>` in the records: `{ successful, result, errors }`.
 *
 * It is a plain object recognised by its shape, never by `instanceof`, so results built by another copy
 * or version of this package, or by a plain-JavaScript tool, are handled the same.
 */
export type InvokeResult<T> = InvokeSuccess<T> | InvokeFailure;

const NO_ERRORS: readonly InvokeError[] = Object.freeze([]);

export const InvokeResult = {
  /**
   * A successful result.
   * @example InvokeResult.create(JSON.stringify({ message: 'Hello, Ada!' }))
   */
  create<T>(value: T): InvokeSuccess<T> {
    return { successful: true, result: value, errors: NO_ERRORS };
  },

  /**
   * A successful result with content blocks beyond JSON text. `value`, when given, is the result's
   * JSON (what text-only callers get, and what an output schema checks); without it, `result` is a JSON
   * description of the blocks (text blocks as they are, the others by kind, media type and size). The
   * executor checks every block (base64, media types, the size bound) before anything is sent.
   * @example InvokeResult.withContent([Content.text('A red pixel:'), Content.image(png, 'image/png')])
   */
  withContent(content: readonly ContentBlock[], value?: object): InvokeSuccess<string> {
    const result = JSON.stringify(value ?? describeContent(content));
    return { successful: true, result, errors: NO_ERRORS, content };
  },

  /**
   * A failed result with one error.
   * @example InvokeResult.fromError("testing_calculator cannot divide by zero: 'b' must not be 0.", 'DIVIDE_BY_ZERO')
   */
  fromError(message: string, code?: string): InvokeFailure {
    return { successful: false, result: null, errors: [code === undefined ? { message } : { message, code }] };
  },

  /**
   * The call needs answers from the user before it can finish. An MCP client that can ask its user
   * (2026-07-28, elicitation declared) gets the questions as `input_required` and calls again with the
   * answers, which the tool reads from `context.input` with its state. Any other caller gets this as a
   * failure (`INPUT_REQUIRED`) with `message`: nothing was done.
   */
  inputRequired(
    needed: ToolInputNeeded,
    message = 'This call needs answers from the user that this caller cannot relay, so nothing was done.',
  ): InvokeFailure {
    return { successful: false, result: null, errors: [{ message, code: 'INPUT_REQUIRED' }], inputRequired: needed };
  },

  /** True when `value` has the shape of an InvokeResult, whoever built it. */
  isInvokeResult(value: unknown): value is InvokeResult<unknown> {
    if (typeof value !== 'object' || value === null) return false;
    const candidate = value as { successful?: unknown; errors?: unknown };
    return (
      typeof candidate.successful === 'boolean' && (candidate.errors === undefined || Array.isArray(candidate.errors))
    );
  },

  /** All error messages of a result, joined for display; empty for a successful result. */
  errorMessage(result: InvokeResult<unknown>): string {
    return result.errors.map((error) => error.message).join(' ');
  },
} as const;
