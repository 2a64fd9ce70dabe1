import { readFileSync } from 'node:fs';
import {
  functionToolSchema,
  TypedAgentTool,
  type AnyAgentToolClass,
  type ObjectSchemaLike,
  type ToolDependencies,
} from '@aptix/tool-contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReasoner } from '../src/index.js';
import { respond, type RequestBody } from '../src/testing/index.js';
import { createHarness, testModes, type Harness } from './support/harness.js';

/** The catalog the tool search's recall is measured on: tools modelled on public MCP servers (name, description, usage guide). */
const CORPUS = new URL('../../tool-search/test/corpus/tools.json', import.meta.url);

interface CorpusEntry {
  readonly name: string;
  readonly description: string;
  readonly guide: string;
  readonly server: string;
}

/**
 * The parameters a corpus tool's guide names ("Arguments: owner and repo (required), title, labels[]"):
 * each a described string, or an array of strings for `name[]`, as MCP servers declare them.
 */
function parametersOf(guide: string): ObjectSchemaLike {
  const list = /Arguments:([^\n]*)/.exec(guide)?.[1] ?? '';
  const properties: Record<string, object> = {};
  const required: string[] = [];
  for (const part of list
    .replace(/\([^)]*\)/g, (group) => (group.includes('required') ? ' !required ' : ' '))
    .split(/,|\band\b|\bor\b/)) {
    const name = /[A-Za-z_][A-Za-z0-9_]*/.exec(part)?.[0];
    if (name === undefined || name === 'required' || name in properties) continue;
    const words = name
      .replace(/_/g, ' ')
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase();
    properties[name] = part.includes(`${name}[]`)
      ? { type: 'array', items: { type: 'string' }, description: `The ${words}, one string each.` }
      : { type: 'string', description: `The ${words}.` };
    if (part.includes('!required')) required.push(name);
  }
  const schema = { type: 'object', properties, required, additionalProperties: false } as const;
  return schema;
}

/** A real tool class for a corpus entry: registered, checked and described like any tool package's. */
function corpusTool(entry: CorpusEntry): AnyAgentToolClass {
  const parameters = parametersOf(entry.guide);
  return class extends TypedAgentTool<never> {
    static readonly ToolName = entry.name;
    static readonly ToolUsageMetadata = entry.guide;
    static getSchema() {
      return functionToolSchema(entry.name, entry.description, parameters);
    }
    constructor({ logger }: ToolDependencies) {
      super(parameters as never, logger);
    }
    protected run(args: unknown) {
      return { tool: entry.name, server: entry.server, args };
    }
  };
}

/** What a model request carries for the tools: their definitions and the instructions (which hold their guides). */
function definitionBytes(body: RequestBody): number {
  return Buffer.byteLength(JSON.stringify(body.tools)) + Buffer.byteLength(body.instructions);
}

describe('the bytes a deferred mode sends per model request', () => {
  const corpus = JSON.parse(readFileSync(CORPUS, 'utf8')) as CorpusEntry[];
  let h: Harness;
  beforeAll(async () => {
    const catalogMode = {
      id: 'd4'.repeat(16),
      key: 'catalog',
      displayName: 'Catalog',
      description: 'Every tool of the corpus.',
      systemPromptSummary: 'CATALOG-SUMMARY',
      isDefault: false,
      tools: corpus.map((entry) => entry.name),
    };
    h = await createHarness({
      extraTools: corpus.map(corpusTool),
      modes: [...testModes(), catalogMode],
      reasoner: { deferred: ['catalog'] },
    });
  });
  afterAll(() => h.close());

  it('are at most 10% of listing the whole mode', async () => {
    expect(corpus.length).toBeGreaterThanOrEqual(200);
    const listing = createReasoner({ ...h.options, deferred: false });
    for (const reasoner of [h.reasoner, listing]) {
      const session = await h.store.createSession({ mode: 'catalog' });
      h.server.script(respond('ok'));
      await reasoner.runTurn(session.id, 'Open an issue about the login bug.');
    }
    const [deferred, listed] = h.server.requests.map((request) => request.body);
    expect(deferred!.tools).toHaveLength(4);
    expect(listed!.tools).toHaveLength(corpus.length + 2);
    const ratio = definitionBytes(deferred!) / definitionBytes(listed!);
    console.info(
      `deferred mode of ${corpus.length} tools: ${definitionBytes(deferred!)} bytes of tool ` +
        `definitions and instructions per request, against ${definitionBytes(listed!)} listed ` +
        `(${(ratio * 100).toFixed(2)}%)`,
    );
    expect(ratio).toBeLessThanOrEqual(0.1);
  });
});
