import MiniSearch, { type SearchOptions } from 'minisearch';
import { stemmer } from 'stemmer';

/** What the index reads of a tool: its name, its description and its usage guide. */
export interface SearchableTool {
  readonly name: string;
  readonly description: string;
  /** The tool's usage guide (`ToolUsageMetadata`): when to use it, its rules and arguments. */
  readonly usageMetadata?: string;
}

/**
 * Words that say nothing about which tool fits: dropped from tools and queries alike, so a query's
 * "the", "my" or "please" cannot outweigh the one word that names the task.
 */
const STOP_WORDS = new Set(
  (
    'a an and any are as at be been by can could do does for from get give has have how i if ' +
    'in into is it its me my of on or our please should so some that the their them then there ' +
    'these this those to use used uses using via was we what when where which who will with ' +
    'would you your tool tools call calls'
  ).split(' '),
);

/** Splits on anything that is not a letter or digit, and at camelCase humps: `createIssue_v2` → create, issue, v2. */
function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((token) => token.length > 0);
}

/** Lower case, stop words out, then the Porter stem, so "refunds", "refunding" and "refund" meet. */
function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  if (STOP_WORDS.has(lower)) return null;
  return stemmer(lower);
}

/**
 * How a query is matched. Field boosts put a word of the name or the description above one buried in
 * the guide; prefix and fuzzy matching forgive a query's partial words and typos on longer terms only,
 * where they rarely match the wrong word. BM25's saturation (k) and length normalisation (b) are lower
 * than MiniSearch's defaults (1.2, 0.7): tool texts are short, and a word said twice in a description
 * is no stronger a sign than once. Chosen on the first set of labelled queries only (test/corpus);
 * a vocabulary of synonyms was tried too and left out, as it lowered recall on the held-out set.
 */
const SEARCH_OPTIONS: SearchOptions = {
  boost: { name: 2, description: 2, usage: 1 },
  bm25: { k: 0.9, b: 0.4, d: 0.5 },
  combineWith: 'OR',
  prefix: (term) => term.length >= 4,
  fuzzy: (term) => (term.length >= 6 ? 0.2 : false),
};

/**
 * A full-text index (MiniSearch, BM25) over a set of tools' names, descriptions and usage guides.
 * Built once per set of tools; a search costs microseconds for a catalog of a thousand tools.
 *
 * @example
 * const index = new ToolSearchIndex(registry.list());
 * index.search('refund the last payment', 5); // ['stripe_create_refund', …]
 */
export class ToolSearchIndex {
  readonly #search: MiniSearch<{ id: number; name: string; description: string; usage: string }>;
  readonly #names: readonly string[];

  constructor(tools: readonly SearchableTool[]) {
    this.#names = tools.map((tool) => tool.name);
    this.#search = new MiniSearch({
      fields: ['name', 'description', 'usage'],
      tokenize,
      processTerm,
      searchOptions: SEARCH_OPTIONS,
    });
    this.#search.addAll(
      tools.map((tool, id) => ({
        id,
        name: tool.name,
        description: tool.description,
        usage: tool.usageMetadata ?? '',
      })),
    );
  }

  /** How many tools the index holds. */
  get size(): number {
    return this.#names.length;
  }

  /**
   * The names of the tools that best match `query`, best first, at most `limit`; none for a query of
   * stop words only. `visible` leaves tools out before the limit is taken (a principal's permissions),
   * so the answer holds up to `limit` tools the caller may use.
   */
  search(query: string, limit: number, visible?: (name: string) => boolean): string[] {
    if (limit <= 0) return [];
    const names = this.#names;
    const options =
      visible === undefined ? undefined : { filter: (hit: { id: unknown }) => visible(names[hit.id as number]!) };
    return this.#search
      .search(query, options)
      .slice(0, limit)
      .map((hit) => names[hit.id as number]!);
  }
}
