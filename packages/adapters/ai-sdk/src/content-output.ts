import { modelContentParts, type InvokeSuccess, type ModelContentPart } from '@aptix/tool-contract';
import type { Tool } from 'ai';

/** What a tool's `toModelOutput` returns (the AI SDK's own type, not exported by `ai` itself). */
type ToolResultOutput = Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>;

/** At most this many calls' content waits for the AI SDK to ask for the model's view of it. */
const MAX_WAITING = 64;

/**
 * Carries content blocks from a tool's `execute` to its `toModelOutput`, by tool call id. The call's
 * output (what the application reads in `toolResults`) stays the result's JSON value; the model gets
 * the blocks as the AI SDK's `content` output (text, and files for images and documents). Held only
 * until read, and at most {@link MAX_WAITING} calls: a view asked for later (messages converted again)
 * falls back to the JSON value, which describes the blocks without their data.
 */
export class ContentForModel {
  readonly #waiting = new Map<string, ModelContentPart[]>();

  /** Keeps the call's content parts, if its result has content. */
  keep(toolCallId: string, result: InvokeSuccess<string>): void {
    const parts = modelContentParts(result);
    if (parts === undefined) return;
    if (this.#waiting.size >= MAX_WAITING) this.#waiting.delete(this.#waiting.keys().next().value!);
    this.#waiting.set(toolCallId, parts);
  }

  /** The AI SDK's `toModelOutput`: the content parts kept for the call, else the JSON output. */
  toModelOutput({ toolCallId, output }: { toolCallId: string; output: unknown }): ToolResultOutput {
    const parts = this.#waiting.get(toolCallId);
    if (parts === undefined) return { type: 'json', value: output as never };
    this.#waiting.delete(toolCallId);
    return { type: 'content', value: parts.map(toContentPart) };
  }
}

function toContentPart(part: ModelContentPart): Extract<ToolResultOutput, { type: 'content' }>['value'][number] {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'file', mediaType: part.mimeType, data: { type: 'data', data: part.data } };
    case 'file':
      return {
        type: 'file',
        mediaType: part.mimeType,
        filename: part.filename,
        data: { type: 'data', data: part.data },
      };
  }
}
