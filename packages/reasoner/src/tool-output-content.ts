import { describeContent, type ContentBlock, type InvokeResult } from '@aptix/tool-contract';
import type { ResponseFunctionCallOutputItem, ResponseFunctionCallOutputItemList } from 'openai/resources/responses/responses';

/**
 * A tool's content blocks as the `output` array of a Responses API `function_call_output`, which takes
 * `input_text`, `input_image` and `input_file` items (Chat Completions tool messages take text only:
 * they get the result's JSON text view instead). Undefined for a result without content, which keeps
 * its plain JSON text output.
 *
 * - text → `input_text`; image → `input_image` with a base64 data URL;
 * - an embedded text document → `input_text` naming its URI and media type, then its text;
 * - an embedded binary document → `input_file` with its bytes as a data URL, named after its URI;
 * - audio → `input_text` saying what was left out: a function call's output has no audio item;
 * - the tool's own JSON value, when it gave one besides the blocks, comes first as `input_text`.
 */
export function toolOutputContent(result: InvokeResult<string>): ResponseFunctionCallOutputItemList | undefined {
  if (!result.successful || result.content === undefined) return undefined;
  const items = result.content.map(toOutputItem);
  // Without a value of its own, the result is the blocks' description: the blocks say it better.
  const ownValue = result.result !== JSON.stringify(describeContent(result.content));
  return ownValue ? [{ type: 'input_text', text: result.result }, ...items] : items;
}

function toOutputItem(block: ContentBlock): ResponseFunctionCallOutputItem {
  switch (block.type) {
    case 'text':
      return { type: 'input_text', text: block.text };
    case 'image':
      return { type: 'input_image', image_url: `data:${block.mimeType};base64,${block.data}`, detail: 'auto' };
    case 'audio':
      return { type: 'input_text', text: `[The tool returned audio (${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes of base64-decoded data), which a function call's output cannot carry to the model; it was left out.]` };
    case 'resource': {
      const { resource } = block;
      const mimeType = resource.mimeType ?? 'application/octet-stream';
      if ('text' in resource) return { type: 'input_text', text: `Document ${resource.uri} (${resource.mimeType ?? 'text'}):\n${resource.text}` };
      return { type: 'input_file', filename: fileName(resource.uri), file_data: `data:${mimeType};base64,${resource.blob}` };
    }
  }
}

/** The last path segment of a URI, as the file's name. */
function fileName(uri: string): string {
  const path = uri.replace(/[?#].*$/, '');
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last === '' ? 'document' : last;
}
