import {
  AptixUnitError,
  promptMessageParts,
  type AptixUnits,
  type UnitPart,
  type UnitRequestOptions,
} from '@aptix/adapter-core';
import type { ResourceContents } from '@aptix/tool-contract';
import { BaseDocumentLoader } from '@langchain/core/document_loaders/base';
import { Document } from '@langchain/core/documents';
import { AIMessage, HumanMessage, type BaseMessage, type ContentBlock } from '@langchain/core/messages';
import { BaseChatPromptTemplate } from '@langchain/core/prompts';
import type { InputValues, PartialValues } from '@langchain/core/utils/types';

/**
 * An Aptix prompt as a LangChain chat prompt template: `formatMessages` (and `invoke`, `pipe`) render
 * it through Aptix (its arguments checked against the prompt's schema, naming the field; the time
 * limit; the session's mode) as `HumanMessage`s and `AIMessage`s. A failed render throws an
 * {@link AptixUnitError} with its code and a message naming what is wrong, as LangChain's own
 * templates throw for a missing variable.
 *
 * @example
 * const chain = aptix.prompt('acme_summarize').pipe(model);
 * const answer = await chain.invoke({ text: '…' });
 */
export class AptixPromptTemplate extends BaseChatPromptTemplate<InputValues> {
  static override lc_name(): string {
    return 'AptixPromptTemplate';
  }

  override lc_serializable = false;

  constructor(
    private readonly units: AptixUnits,
    /** The Aptix prompt's name. */
    readonly promptName: string,
    fields: { inputVariables: string[]; partialVariables?: PartialValues },
    private readonly requestOptions: UnitRequestOptions = {},
  ) {
    super(fields);
  }

  _getPromptType(): 'prompt' {
    return 'prompt';
  }

  async formatMessages(values: InputValues): Promise<BaseMessage[]> {
    const merged = await this.mergePartialAndUserVariables(values);
    const rendered = await this.units.render(this.promptName, merged, this.requestOptions);
    if (!rendered.ok) throw new AptixUnitError(rendered);
    return promptMessageParts(rendered.value.messages).map(({ role, parts }) => {
      const content = messageContent(parts);
      return role === 'user' ? new HumanMessage({ content }) : new AIMessage({ content });
    });
  }

  async partial(values: PartialValues): Promise<AptixPromptTemplate> {
    return new AptixPromptTemplate(
      this.units,
      this.promptName,
      {
        inputVariables: this.inputVariables.filter((name) => !(name in values)),
        partialVariables: { ...this.partialVariables, ...values },
      },
      this.requestOptions,
    );
  }
}

/** The template of prompt `name`, its required arguments as the input variables. @throws {AptixUnitError} no prompt of that name was given. */
export function promptTemplate(units: AptixUnits, name: string, options?: UnitRequestOptions): AptixPromptTemplate {
  const prompt = units.prompts.get(name);
  if (prompt === undefined)
    throw new AptixUnitError({
      code: 'PROMPT_NOT_FOUND',
      message: `No prompt named "${String(name).slice(0, 200)}" was given to this adapter. Its prompts: ${units.prompts.names().join(', ') || 'none'}.`,
    });
  const inputVariables = prompt.arguments.filter((arg) => arg.required).map((arg) => arg.name);
  return new AptixPromptTemplate(units, name, { inputVariables }, options);
}

/** A single text is the message's text; anything else LangChain's standard content blocks. */
function messageContent(parts: readonly UnitPart[]): string | ContentBlock[] {
  if (parts.length === 1 && parts[0]!.type === 'text') return parts[0]!.text;
  return parts.map((part): ContentBlock => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'image':
        return { type: 'image', mimeType: part.mimeType, data: part.data };
      case 'file':
        return part.mimeType.startsWith('audio/')
          ? { type: 'audio', mimeType: part.mimeType, data: part.data }
          : { type: 'file', mimeType: part.mimeType, data: part.data, metadata: { filename: part.filename } };
    }
  });
}

/**
 * Aptix resources as LangChain `Document`s: `load()` reads each URI given (by default every resource
 * at a fixed URI the session's mode offers) through Aptix's checks. A text document's text is the
 * `pageContent`; a binary one has an empty `pageContent` and its base64 bytes in `metadata.blob`.
 * `metadata` holds `source` (the URI), `uri` and `mimeType`. A read that fails throws an
 * {@link AptixUnitError} naming the URI, its code and what is wrong.
 *
 * @example
 * const docs = await aptix.resourceLoader(['acme://docs/readme']).load();
 */
export class AptixResourceLoader extends BaseDocumentLoader {
  constructor(
    private readonly units: AptixUnits,
    private readonly uris?: readonly string[],
    private readonly requestOptions: UnitRequestOptions = {},
  ) {
    super();
  }

  async load(): Promise<Document[]> {
    const uris =
      this.uris ??
      (await this.units.listResources()).flatMap((resource) => (resource.uri === undefined ? [] : [resource.uri]));
    const documents: Document[] = [];
    for (const uri of uris) {
      const read = await this.units.read(uri, this.requestOptions);
      if (!read.ok) throw new AptixUnitError(read);
      documents.push(...read.value.map(toDocument));
    }
    return documents;
  }
}

function toDocument(contents: ResourceContents): Document {
  const metadata = { source: contents.uri, uri: contents.uri, mimeType: contents.mimeType };
  return 'text' in contents
    ? new Document({ pageContent: contents.text, metadata })
    : new Document({ pageContent: '', metadata: { ...metadata, blob: contents.blob } });
}
