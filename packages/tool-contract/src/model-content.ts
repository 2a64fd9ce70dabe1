import { describeContent, type ContentBlock } from './content.js';
import type { InvokeSuccess } from './invoke-result.js';

/**
 * One part of a tool result as model APIs take it in a function call's output: text, an image, or a
 * file. Each adapter maps these three onto its API's own item shapes.
 */
export type ModelContentPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly data: string; readonly mimeType: string }
  | { readonly type: 'file'; readonly data: string; readonly mimeType: string; readonly filename: string };

/**
 * A result's content blocks as model-facing parts, or undefined for a result without content (send
 * its JSON text). The tool's own JSON value, when it gave one, comes first as text; an embedded text
 * document becomes text naming its URI and media type; a binary one a file named after its URI; audio,
 * which no function call output takes, a text saying it was left out.
 *
 * @example modelContentParts(result)?.map((part) => (part.type === 'text' ? { type: 'input_text', text: part.text } : …))
 */
export function modelContentParts(result: InvokeSuccess<string>): ModelContentPart[] | undefined {
  const blocks = result.content;
  if (blocks === undefined) return undefined;
  const parts = blocks.map(toPart);
  // Without a value of its own, the result is the blocks' description: the blocks say it better.
  const ownValue = result.result !== JSON.stringify(describeContent(blocks));
  return ownValue ? [{ type: 'text', text: result.result }, ...parts] : parts;
}

function toPart(block: ContentBlock): ModelContentPart {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return { type: 'image', data: block.data, mimeType: block.mimeType };
    case 'audio':
      return {
        type: 'text',
        text:
          `[The tool returned audio (${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} ` +
          `bytes of base64-decoded data), which a function call's output cannot carry to the model; ` +
          `it was left out.]`,
      };
    case 'resource': {
      const { resource } = block;
      if ('text' in resource)
        return { type: 'text', text: `Document ${resource.uri} (${resource.mimeType ?? 'text'}):\n${resource.text}` };
      return {
        type: 'file',
        data: resource.blob,
        mimeType: resource.mimeType ?? 'application/octet-stream',
        filename: fileName(resource.uri),
      };
    }
  }
}

/** The last path segment of a URI, as the file's name. */
function fileName(uri: string): string {
  const path = uri.replace(/[?#].*$/, '');
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last === '' ? 'document' : last;
}
