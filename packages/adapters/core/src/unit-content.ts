import type { ContentBlock, PromptMessage, ResourceContents } from '@aptix/tool-contract';

/**
 * One part of a rendered prompt or a read resource, as model APIs take it in a message: text, an
 * image, or a file (audio and binary documents). Each adapter maps these onto its framework's shapes.
 */
export type UnitPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly data: string; readonly mimeType: string }
  | { readonly type: 'file'; readonly data: string; readonly mimeType: string; readonly filename: string };

/** A rendered prompt's message as a role and its parts. */
export interface UnitMessage {
  readonly role: 'user' | 'assistant';
  readonly parts: UnitPart[];
}

/** A prompt's messages, each with its one content block as a part (an embedded text document as text naming its URI). */
export function promptMessageParts(messages: readonly PromptMessage[]): UnitMessage[] {
  return messages.map((message) => ({ role: message.role, parts: [blockPart(message.content)] }));
}

function blockPart(block: ContentBlock): UnitPart {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return { type: 'image', data: block.data, mimeType: block.mimeType };
    case 'audio':
      return { type: 'file', data: block.data, mimeType: block.mimeType, filename: 'audio' };
    case 'resource':
      return contentsPart(block.resource);
  }
}

/** A read resource's contents as parts: a text document as text naming its URI and media type, a binary one as a file named after its URI. */
export function resourceParts(contents: readonly ResourceContents[]): UnitPart[] {
  return contents.map(contentsPart);
}

function contentsPart(contents: ResourceContents): UnitPart {
  if ('text' in contents)
    return { type: 'text', text: `Document ${contents.uri} (${contents.mimeType ?? 'text/plain'}):\n${contents.text}` };
  const mimeType = contents.mimeType ?? 'application/octet-stream';
  return mimeType.startsWith('image/')
    ? { type: 'image', data: contents.blob, mimeType }
    : { type: 'file', data: contents.blob, mimeType, filename: fileName(contents.uri) };
}

/** The last path segment of a URI, as the file's name. */
function fileName(uri: string): string {
  const path = uri.replace(/[?#].*$/, '');
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last === '' ? 'document' : last;
}
