/** The parts of an ajv error the messages use (Fastify's validator runs with `verbose`, so `parentSchema` is set). */
export interface ValidationIssue {
  readonly keyword: string;
  readonly instancePath: string;
  readonly schemaPath: string;
  readonly params: Record<string, unknown>;
  readonly message?: string;
  readonly parentSchema?: { properties?: Record<string, unknown>; anyOf?: Array<Record<string, unknown>> };
  /** The value that failed (set with `verbose`). */
  readonly data?: unknown;
}

/** Fields a client is likely to send at the top level of a body, and where they belong. */
const BELONGS_IN: Readonly<Record<string, string>> = {
  sessionId: 'context.sessionId',
  conversationId: 'context.conversationId',
};

const PLACE: Readonly<Record<string, string>> = {
  body: 'the body',
  querystring: 'the query',
  params: 'the path',
  headers: 'the headers',
};

/**
 * One sentence per problem, naming the field and what to send instead, e.g.
 * `format must be one of responses, chat, mcp` or `unknown field "contxt" in the body: did you mean "context"?`.
 */
export function describeValidation(issues: readonly ValidationIssue[], context: string): string {
  // An anyOf reports each branch's failure and then its own: keep only the anyOf's, which says it all.
  const unions = issues.filter((issue) => issue.keyword === 'anyOf').map((issue) => `${issue.schemaPath}/`);
  const kept = issues.filter((issue) => !unions.some((prefix) => issue.schemaPath.startsWith(prefix)));
  const sentences = [...new Set(kept.map((issue) => describe(issue, context)))];
  return `${sentences.join('; ')}. The API is described at /docs.`;
}

function describe(issue: ValidationIssue, context: string): string {
  const place = PLACE[context] ?? context;
  const path = issue.instancePath.slice(1).replace(/\//g, '.');
  const field = path === '' ? place : path;
  switch (issue.keyword) {
    case 'additionalProperties': {
      const name = String(issue.params.additionalProperty);
      const known = Object.keys(issue.parentSchema?.properties ?? {});
      const within = path === '' ? place : `${path} (in ${place})`;
      const moved = BELONGS_IN[name];
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      if (path === '' && context === 'body' && moved !== undefined && known.includes(moved.split('.')[0]!)) {
        return `"${name}" does not go at the top level of the body: put it in ${moved}, as {"${moved.split('.')[0]}":{"${name}":…}}`;
      }
      const guess = closest(name, known);
      const accepted = known.length === 0 ? 'it accepts no fields' : `accepted: ${known.join(', ')}`;
      return `unknown field "${name}" in ${within}${guess === undefined ? '' : `: did you mean "${guess}"?`} (${accepted})`;
    }
    case 'required': {
      const missing = String(issue.params.missingProperty);
      // The first failure ajv reports; a misspelt field shows up here as the one missing.
      const known = Object.keys(issue.parentSchema?.properties ?? {});
      const given =
        issue.data !== null && typeof issue.data === 'object'
          ? Object.keys(issue.data).filter((key) => !known.includes(key))
          : [];
      const misspelt = given.find((key) => closest(key, [missing]) !== undefined);
      return `${path === '' ? place : path} is missing the field "${missing}"${misspelt === undefined ? '' : ` (it has "${misspelt}": did you mean "${missing}"?)`}`;
    }
    case 'enum':
      return `${field} must be one of ${(issue.params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `${field} must be ${JSON.stringify(issue.params.allowedValue)}`;
    case 'anyOf': {
      const branches = issue.parentSchema?.anyOf ?? [];
      if (branches.length > 0 && branches.every((branch) => 'const' in branch))
        return `${field} must be one of ${branches.map((branch) => String(branch.const)).join(', ')}`;
      const kinds = branches.map((branch) =>
        typeof branch.type === 'string' ? article(branch.type) : 'another shape',
      );
      return `${field} must be ${[...new Set(kinds)].join(' or ')}`;
    }
    case 'type':
      return `${field} must be ${article(String(issue.params.type))}`;
    case 'minLength':
      return issue.params.limit === 1
        ? `${field} must not be empty`
        : `${field} must be at least ${String(issue.params.limit)} characters long`;
    case 'maxLength':
      return `${field} must be at most ${String(issue.params.limit)} characters long`;
    default:
      return `${field} ${issue.message ?? 'is invalid'}`;
  }
}

function article(type: string): string {
  const named: Record<string, string> = {
    object: 'a JSON object',
    array: 'an array',
    string: 'a string',
    integer: 'a whole number',
    number: 'a number',
    boolean: 'true or false',
    null: 'null',
  };
  return named[type] ?? type.split(',').map(article).join(' or ');
}

/** The known name nearest to `name`, if it is near enough to be a typo (Levenshtein distance) or a shortening. */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of known) {
    const [a, b] = [name.toLowerCase(), candidate.toLowerCase()];
    // An abbreviation ("args" for "arguments", "ctx" for "context") is as likely a slip as a typo.
    const distance = abbreviates(a, b) || abbreviates(b, a) ? 1 : levenshtein(a, b);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** `short` keeps the first letter of `long` and the rest of its letters in order. */
function abbreviates(short: string, long: string): boolean {
  if (short.length < 3 || short.length >= long.length || short[0] !== long[0]) return false;
  let at = 0;
  for (const letter of long) if (letter === short[at]) at += 1;
  return at >= short.length;
}

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}
