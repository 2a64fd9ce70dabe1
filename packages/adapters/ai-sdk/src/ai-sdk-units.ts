import {
  promptMessageParts,
  resourceParts,
  type AptixUnits,
  type UnitPart,
  type UnitRequestOptions,
  type UnitResult,
} from '@aptix/adapter-core';
import type { FilePart, ModelMessage, TextPart } from 'ai';

/** The parts of a user message that carry a resource: text, and files (images too: the AI SDK's `image` part is deprecated). */
export type ResourcePart = TextPart | FilePart;

/**
 * Aptix prompts and resources in the AI SDK's own shapes: a rendered prompt is `ModelMessage[]` (for
 * `generateText`/`streamText`'s `messages`), a read resource the parts of a user message. Both go through
 * Aptix's checks (arguments validated naming the field, time and size bounds, the session's mode) and
 * never throw: a failure is `{ ok: false, code, message }`.
 */
export interface AiSdkUnits {
  /**
   * Renders prompt `name` as the AI SDK's messages, one per prompt message: text, and files of their
   * media type for images, audio and binary documents.
   * @example
   * const prompt = await units.messages('acme_summarize', { text });
   * if (prompt.ok) await generateText({ model, messages: prompt.value });
   */
  messages(
    name: string,
    args?: Record<string, string>,
    options?: UnitRequestOptions,
  ): Promise<UnitResult<ModelMessage[]>>;
  /**
   * Reads the resource at `uri` as user-message parts: a text document as text naming its URI, bytes
   * (an image too) as a file of their media type.
   * @example
   * const doc = await units.parts('acme://docs/readme');
   * if (doc.ok) messages.push({ role: 'user', content: [{ type: 'text', text: 'Use this:' }, ...doc.value] });
   */
  parts(uri: string, options?: UnitRequestOptions): Promise<UnitResult<ResourcePart[]>>;
  /** The prompts, resources and templates underneath: listing and completions. */
  readonly units: AptixUnits;
}

/** The AI SDK's view of an adapter's prompts and resources (`createAiSdkTools` gives one as `units`). */
export function aiSdkUnits(units: AptixUnits): AiSdkUnits {
  return {
    async messages(name, args, options) {
      const rendered = await units.render(name, args ?? {}, options);
      if (!rendered.ok) return rendered;
      return {
        ok: true,
        value: promptMessageParts(rendered.value.messages).map(({ role, parts }): ModelMessage => {
          // Text and files: what both a user and an assistant message take.
          const content = parts.map(userPart);
          return role === 'user' ? { role, content } : { role, content };
        }),
      };
    },
    async parts(uri, options) {
      const read = await units.read(uri, options);
      return read.ok ? { ok: true, value: resourceParts(read.value).map(userPart) } : read;
    },
    units,
  };
}

/** Text as text; images, audio and files as files of their media type (the AI SDK's `image` part is deprecated). */
function userPart(part: UnitPart): ResourcePart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  return {
    type: 'file',
    data: { type: 'data', data: part.data },
    mediaType: part.mimeType,
    ...(part.type === 'file' ? { filename: part.filename } : {}),
  };
}
