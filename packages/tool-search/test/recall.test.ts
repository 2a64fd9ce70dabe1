/**
 * Search quality over a realistic catalog (issue 31): 1,066 tools modelled on public MCP servers, and
 * labelled queries written as users ask (test/corpus/README.md). Recall@5: the share of a query's
 * relevant tools found in the first five answers, averaged over the queries. The held-out queries were
 * written by another author who saw neither the engine nor the first set.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { metaToolDefinitions, ToolFinder, ToolSearchIndex, type FindableTool } from '../src/index.js';

interface CorpusTool {
  readonly name: string;
  readonly description: string;
  readonly guide: string;
}
interface LabelledQuery {
  readonly query: string;
  readonly expected: readonly string[];
}

const read = <T>(file: string): T =>
  JSON.parse(readFileSync(new URL(`./corpus/${file}`, import.meta.url), 'utf8')) as T;
const corpus = read<CorpusTool[]>('tools.json');
const tools: FindableTool[] = corpus.map((tool) => ({
  name: tool.name,
  description: tool.description,
  usageMetadata: tool.guide,
  parameters: { type: 'object', properties: {}, required: [] },
}));

/** Mean recall@k of the index over labelled queries. */
function recallAt(index: ToolSearchIndex, queries: readonly LabelledQuery[], k: number): number {
  let sum = 0;
  for (const { query, expected } of queries) {
    const top = index.search(query, k);
    sum += expected.filter((name) => top.includes(name)).length / expected.length;
  }
  return sum / queries.length;
}

/**
 * The floor this suite holds, so a change that makes search worse fails. Issue 31's goal is 0.9;
 * the figures measured against it are in docs/BENCHMARKS.md (section "Finding tools").
 */
const RECALL_FLOOR = 0.8;

describe('recall over a catalog of realistic tools', () => {
  const index = new ToolSearchIndex(tools);

  it('holds a real catalog: over a thousand distinct tools, and labels that name tools of it', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(1000);
    expect(new Set(corpus.map((tool) => tool.description)).size).toBe(corpus.length);
    for (const file of ['queries.json', 'held-out-queries.json']) {
      const queries = read<LabelledQuery[]>(file);
      expect(queries.length, file).toBeGreaterThanOrEqual(50);
      for (const { expected } of queries)
        for (const name of expected)
          expect(
            corpus.some((tool) => tool.name === name),
            name,
          ).toBe(true);
    }
  });

  it('finds the right tools in the first five for the queries its settings were chosen on', () => {
    expect(recallAt(index, read<LabelledQuery[]>('queries.json'), 5)).toBeGreaterThanOrEqual(RECALL_FLOOR);
  });

  it('and as well for the held-out queries, which no setting was chosen on', () => {
    expect(recallAt(index, read<LabelledQuery[]>('held-out-queries.json'), 5)).toBeGreaterThanOrEqual(RECALL_FLOOR);
  });

  it('a turn sends at most a tenth of the bytes of listing the whole mode: the pair, and one find of eight tools with their guides', () => {
    const whole = JSON.stringify(
      tools.map(({ name, description, parameters }) => ({ name, description, inputSchema: parameters })),
    ).length;
    const finder = new ToolFinder('all', tools);
    const queries = read<LabelledQuery[]>('queries.json');
    const largest = Math.max(
      ...queries.map(
        ({ query }) => JSON.stringify(finder.find({ query }, 'a-session-id-of-36-characters-000000')).length,
      ),
    );
    const perTurn = JSON.stringify(metaToolDefinitions('mcp')).length + largest;
    expect(perTurn / whole).toBeLessThanOrEqual(0.1);
  });
});
