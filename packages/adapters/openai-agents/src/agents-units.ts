import {
  AptixUnitError,
  promptMessageParts,
  resourceParts,
  type AptixUnits,
  type UnitPart,
  type UnitRequestOptions,
  type UnitResult,
} from '@aptix/adapter-core';
import type {
  AssistantMessageItem,
  MCPListResourcesResult,
  MCPListResourceTemplatesResult,
  MCPReadResourceResult,
  MCPServerWithResources,
  UserMessageItem,
} from '@openai/agents';

/** The Agents SDK's resource methods (those of its `MCPServerWithResources`), served by Aptix. */
export type AgentsResources = Pick<MCPServerWithResources, 'listResources' | 'listResourceTemplates' | 'readResource'>;

/**
 * Aptix prompts and resources in the Agents SDK's shapes. The SDK has no prompt template of its own
 * (an agent's `prompt` names a prompt stored at OpenAI, which Aptix does not create): a rendered prompt
 * is given as the run's input items instead. Resources answer with the SDK's own MCP resource types.
 */
export interface AgentsUnits {
  /**
   * Renders prompt `name` as input items for `run(agent, items)`: a user message item per user message
   * (`input_text`, `input_image`, `input_file`), an assistant message item per assistant one. Never
   * throws: a failure is `{ ok: false, code, message }`.
   * @example
   * const prompt = await aptix.units.input('acme_summarize', { text });
   * if (prompt.ok) await run(agent, prompt.value);
   */
  input(
    name: string,
    args?: Record<string, string>,
    options?: UnitRequestOptions,
  ): Promise<UnitResult<Array<UserMessageItem | AssistantMessageItem>>>;
  /** Reads the resource at `uri` as one user message item, to add to a run's input. Never throws. */
  resourceInput(uri: string, options?: UnitRequestOptions): Promise<UnitResult<UserMessageItem>>;
  /**
   * `listResources`, `listResourceTemplates` and `readResource` as the SDK's MCP servers answer them,
   * for code written against `MCPServerWithResources`. As there, a failed read rejects: with an
   * AptixUnitError carrying its code and a message naming what is wrong.
   */
  readonly resources: AgentsResources;
  /** The prompts, resources and templates underneath: listing and completions. */
  readonly units: AptixUnits;
}

const dataUrl = (part: { data: string; mimeType: string }) => `data:${part.mimeType};base64,${part.data}`;

function userContent(part: UnitPart): UserMessageItem['content'][number] & object {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: part.text };
    case 'image':
      return { type: 'input_image', image: dataUrl(part) };
    case 'file':
      return { type: 'input_file', file: dataUrl(part), filename: part.filename };
  }
}

/** An assistant message item takes text and images; a file there is named in text instead, saying it was left out. */
function assistantContent(part: UnitPart): AssistantMessageItem['content'][number] {
  switch (part.type) {
    case 'text':
      return { type: 'output_text', text: part.text };
    case 'image':
      return { type: 'image', image: dataUrl(part) };
    case 'file':
      return {
        type: 'output_text',
        text: `[A file (${part.mimeType}, ${part.filename}) was left out: an assistant message of the Agents SDK takes no files.]`,
      };
  }
}

/** The Agents SDK's view of an adapter's prompts and resources (`createAgentsTools` gives one as `units`). */
export function agentsUnits(units: AptixUnits): AgentsUnits {
  return {
    async input(name, args, options) {
      const rendered = await units.render(name, args ?? {}, options);
      if (!rendered.ok) return rendered;
      return {
        ok: true,
        value: promptMessageParts(rendered.value.messages).map(({ role, parts }) =>
          role === 'user'
            ? { type: 'message', role, content: parts.map(userContent) }
            : { type: 'message', role, status: 'completed', content: parts.map(assistantContent) },
        ),
      };
    },
    async resourceInput(uri, options) {
      const read = await units.read(uri, options);
      if (!read.ok) return read;
      return {
        ok: true,
        value: { type: 'message', role: 'user', content: resourceParts(read.value).map(userContent) },
      };
    },
    resources: {
      async listResources(): Promise<MCPListResourcesResult> {
        const listed = await units.listResources();
        return {
          resources: listed.flatMap(({ uri, name, title, description, mimeType }) =>
            uri === undefined ? [] : [{ uri, name, mimeType, ...defined({ title, description }) }],
          ),
        };
      },
      async listResourceTemplates(): Promise<MCPListResourceTemplatesResult> {
        const listed = await units.listResources();
        return {
          resourceTemplates: listed.flatMap(({ uriTemplate, name, title, description, mimeType }) =>
            uriTemplate === undefined ? [] : [{ uriTemplate, name, mimeType, ...defined({ title, description }) }],
          ),
        };
      },
      async readResource(uri: string): Promise<MCPReadResourceResult> {
        const read = await units.read(uri);
        if (!read.ok) throw new AptixUnitError(read);
        return { contents: read.value.map((contents) => ({ ...contents })) };
      },
    },
    units,
  };
}

function defined(fields: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
