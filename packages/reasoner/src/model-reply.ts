import type { ResponseOutputItem } from 'openai/resources/responses/responses';

/** What one model call produced: its output items, untouched, ready to be stored. */
export interface ModelReply {
  readonly output: readonly ResponseOutputItem[];
  /** The response's id, model and token usage, when the endpoint reports them (for the call's span). */
  readonly id?: string;
  readonly model?: string;
  readonly usage?: { readonly input_tokens: number; readonly output_tokens: number };
}
