import { modelContentParts, type InvokeResult, type ModelContentPart } from '@aptix/tool-contract';
import type {
  ResponseFunctionCallOutputItem,
  ResponseFunctionCallOutputItemList,
} from 'openai/resources/responses/responses';

/**
 * A tool's content blocks as the `output` array of a Responses API `function_call_output`, which takes
 * `input_text`, `input_image` and `input_file` items (Chat Completions tool messages take text only:
 * they get the result's JSON text view instead). Undefined for a result without content, which keeps
 * its plain JSON text output. What each block becomes: see `modelContentParts`.
 */
export function toolOutputContent(result: InvokeResult<string>): ResponseFunctionCallOutputItemList | undefined {
  if (!result.successful) return undefined;
  return modelContentParts(result)?.map(toOutputItem);
}

function toOutputItem(part: ModelContentPart): ResponseFunctionCallOutputItem {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: part.text };
    case 'image':
      return { type: 'input_image', image_url: `data:${part.mimeType};base64,${part.data}`, detail: 'auto' };
    case 'file':
      return { type: 'input_file', filename: part.filename, file_data: `data:${part.mimeType};base64,${part.data}` };
  }
}
