/**
 * 10. Finding tools (issue 31): a model that works in a mode through aptix_find_tools and
 * aptix_call_tool instead of the mode's whole list. Over the corpus of 1,066 tools modelled on public MCP
 * servers (packages/tool-search/test/corpus): how many definition bytes a turn sends against listing the
 * whole mode, Recall@5 on the labelled queries, and what a search and the index cost.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metaToolDefinitions, ToolFinder, ToolSearchIndex, type FindableTool } from '@aptix/tool-search';
import { WORKSPACE_ROOT } from '../paths.js';
import type { Row } from '../report.js';

const SECTION = '10. Finding tools: aptix_find_tools over a catalog of 1,066 realistic tools';

interface LabelledQuery {
  readonly query: string;
  readonly expected: readonly string[];
}

const corpus = (file: string): unknown =>
  JSON.parse(readFileSync(join(WORKSPACE_ROOT, 'packages', 'tool-search', 'test', 'corpus', file), 'utf8'));

function recallAt5(index: ToolSearchIndex, queries: readonly LabelledQuery[]): number {
  let sum = 0;
  for (const { query, expected } of queries) {
    const top = index.search(query, 5);
    sum += expected.filter((name) => top.includes(name)).length / expected.length;
  }
  return sum / queries.length;
}

export function toolSearchSection(log: (line: string) => void): Row[] {
  const tools: FindableTool[] = (
    corpus('tools.json') as Array<{ name: string; description: string; guide: string }>
  ).map((tool) => ({
    name: tool.name,
    description: tool.description,
    usageMetadata: tool.guide,
    parameters: { type: 'object', properties: {}, required: [] },
  }));
  const tuned = corpus('queries.json') as LabelledQuery[];
  const heldOut = corpus('held-out-queries.json') as LabelledQuery[];

  log('  tool search: index and recall');
  let built = performance.now();
  const index = new ToolSearchIndex(tools);
  built = performance.now() - built;
  const queries = [...tuned, ...heldOut];
  const rounds = 20;
  let searched = performance.now();
  for (let round = 0; round < rounds; round++) for (const { query } of queries) index.search(query, 8);
  searched = (performance.now() - searched) / (rounds * queries.length);

  // What a turn sends: the pair's definitions, and the largest answer of one find (eight tools, their guides).
  const finder = new ToolFinder('all', tools);
  const whole = JSON.stringify(
    tools.map(({ name, description, parameters }) => ({ name, description, inputSchema: parameters })),
  ).length;
  const largestFind = Math.max(
    ...queries.map(
      ({ query }) => JSON.stringify(finder.find({ query }, '00000000-0000-0000-0000-000000000000')).length,
    ),
  );
  const perTurn = JSON.stringify(metaToolDefinitions('mcp')).length + largestFind;

  return [
    {
      section: SECTION,
      measure: 'definition bytes a turn sends: the pair and the largest find (8 tools)',
      figure: perTurn,
      unit: 'bytes',
      baseline: { name: 'listing the whole mode', figure: whole },
      goal: { kind: 'ratio-at-most', value: 0.1 },
      note:
        `The whole mode's MCP listing is names, descriptions and an empty parameters schema each ` +
        `(the corpus has no schemas; real ones make the whole listing larger, and a find of eight ` +
        `only a little). A find answers each tool's description, parameters and usage guide. The ` +
        `Reasoner's deferred mode measured on the same corpus: 1.4% of the bytes ` +
        `(packages/reasoner/test/deferred-bytes.test.ts).`,
    },
    {
      section: SECTION,
      measure: `Recall@5, the ${tuned.length} queries the settings were chosen on`,
      figure: recallAt5(index, tuned),
      unit: '',
      goal: { kind: 'at-least', value: 0.9, unit: '' },
      note:
        "The share of a query's relevant tools among the first five answers, averaged. MiniSearch " +
        '(BM25) over names, descriptions and usage guides, with Porter stems and stop words; its ' +
        'settings (field boosts, BM25 k and b) were chosen on these queries.',
    },
    {
      section: SECTION,
      measure: `Recall@5, ${heldOut.length} held-out queries`,
      figure: recallAt5(index, heldOut),
      unit: '',
      goal: { kind: 'at-least', value: 0.9, unit: '' },
      note: 'Written by another author who saw neither the engine nor the first queries; no setting was chosen on them.',
    },
    {
      section: SECTION,
      measure: 'one search of the 1,066 tools',
      figure: searched * 1000,
      unit: 'µs',
      note: `Mean over ${queries.length} queries, ${rounds} rounds.`,
    },
    {
      section: SECTION,
      measure: 'building the index of the 1,066 tools',
      figure: built,
      unit: 'ms',
      note: 'Once per mode and set of tools, on the first find (the host keeps it until the tools change).',
    },
  ];
}
