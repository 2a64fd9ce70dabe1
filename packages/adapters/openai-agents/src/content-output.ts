import { modelContentParts, type InvokeSuccess, type ModelContentPart } from '@aptix/tool-contract';
import type { ToolOutputFileContent, ToolOutputImage, ToolOutputText } from '@openai/agents';

/** One item of a function tool's structured output, as the Agents SDK takes it. */
export type AgentsToolOutputItem = ToolOutputText | ToolOutputImage | ToolOutputFileContent;

/**
 * What an Agents SDK function tool returns for an Aptix result: the result's JSON text, or, for a
 * result with content blocks, the SDK's structured items (text, image, file), which it sends to the
 * Responses API as `input_text` / `input_image` / `input_file`. What each block becomes: see
 * `modelContentParts`.
 */
export function agentsToolOutput(result: InvokeSuccess<string>): string | AgentsToolOutputItem[] {
  return modelContentParts(result)?.map(toItem) ?? result.result;
}

function toItem(part: ModelContentPart): AgentsToolOutputItem {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image', image: { data: part.data, mediaType: part.mimeType } };
    case 'file':
      return { type: 'file', file: { data: part.data, mediaType: part.mimeType, filename: part.filename } };
  }
}
