/**
 * URI templates as MCP's `resources/templates/list` uses them: RFC 6570 level 1, simple string
 * expansion (`{var}`) only. A variable matches one path segment (no `/`, `?` or `#`), is
 * percent-decoded, and is refused when it could climb out of where the template points (`.`, `..`),
 * or carries a slash, a backslash or a control character once decoded.
 */

/** A variable's name in a template: letters, digits and underscores (RFC 6570's varchar, without pct-encoded and dots). */
const VARIABLE = /^[A-Za-z0-9_]{1,64}$/;
/** A URI with a scheme (RFC 3986 §3.1) and no whitespace or control characters. */
// eslint-disable-next-line no-control-regex -- control characters are matched on purpose, to refuse or escape them
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\u0000-\u001f\u007f]*$/;
/** The longest URI (or template) a resource may declare or a client may ask to read. */
export const MAX_RESOURCE_URI_LENGTH = 2048;

/** A parsed template: its literal parts around its variables, and a matcher for concrete URIs. */
export interface UriTemplate {
  readonly template: string;
  /** The variables, in order of appearance. */
  readonly variables: readonly string[];
  /** The variables of `uri` when it matches (percent-decoded), or undefined; throws nothing. */
  match(uri: string): Readonly<Record<string, string>> | undefined;
  /** The URI for these variables, each percent-encoded as RFC 6570 simple expansion does. */
  expand(variables: Readonly<Record<string, string>>): string;
}

/** Why `uri` is no URI a resource may have, or undefined: absolute, with a scheme, no `.`/`..` segment, bounded. */
export function uriProblem(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || uri.length === 0) return 'it is not a non-empty string';
  if (uri.length > MAX_RESOURCE_URI_LENGTH)
    return `it is ${uri.length} characters long; at most ${MAX_RESOURCE_URI_LENGTH} are allowed`;
  if (!ABSOLUTE_URI.test(uri))
    return 'it is not an absolute URI with a scheme and without spaces or control characters (like "acme://docs/readme")';
  const path = uri.replace(/[?#].*$/, '');
  if (path.split('/').some((segment) => isDotSegment(segment)))
    return 'it has a "." or ".." segment; write the path it means without them';
  return undefined;
}

function isDotSegment(segment: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    decoded = segment;
  }
  return decoded === '.' || decoded === '..';
}

/**
 * Parses a level-1 template (`acme://users/{id}/profile`), or says what is wrong with it.
 * @example parseUriTemplate('acme://users/{id}').match('acme://users/42') // { id: '42' }
 */
export function parseUriTemplate(template: string): UriTemplate | string {
  if (typeof template !== 'string' || template.length === 0) return 'it is not a non-empty string';
  if (template.length > MAX_RESOURCE_URI_LENGTH)
    return `it is ${template.length} characters long; at most ${MAX_RESOURCE_URI_LENGTH} are allowed`;
  const literals: string[] = [];
  const variables: string[] = [];
  let at = 0;
  for (;;) {
    const open = template.indexOf('{', at);
    const close = template.indexOf('}', at);
    if (open === -1) {
      if (close !== -1) return `it has a "}" at character ${close + 1} without a "{" before it`;
      literals.push(template.slice(at));
      break;
    }
    if (close !== -1 && close < open) return `it has a "}" at character ${close + 1} without a "{" before it`;
    if (close === -1) return `the "{" at character ${open + 1} is never closed`;
    const name = template.slice(open + 1, close);
    if (!VARIABLE.test(name))
      return `"{${name}}" is not a level-1 variable: MCP templates take {name} only, a name of letters, digits and underscores (no operators such as +, #, / or ?, no lists)`;
    if (variables.includes(name)) return `the variable "${name}" appears twice`;
    literals.push(template.slice(at, open));
    variables.push(name);
    at = close + 1;
  }
  if (variables.length === 0) return 'it has no {variable}; declare a fixed URI as `uri`, not `uriTemplate`';
  for (let i = 1; i < literals.length - 1; i++)
    if (literals[i] === '') return 'two variables are next to each other; separate them with a literal, like "/"';
  const sample = literals.reduce((text, literal, i) => text + literal + (i < variables.length ? 'x' : ''), '');
  const problem = uriProblem(sample);
  if (problem !== undefined) return problem;
  const pattern = new RegExp(
    `^${literals.map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('([^/?#]+)')}$`,
  );
  return {
    template,
    variables,
    match(uri: string) {
      if (typeof uri !== 'string' || uri.length > MAX_RESOURCE_URI_LENGTH) return undefined;
      const found = pattern.exec(uri);
      if (found === null) return undefined;
      const values: Record<string, string> = Object.create(null) as Record<string, string>;
      for (let i = 0; i < variables.length; i++) {
        const value = decodeVariable(found[i + 1]!);
        if (value === undefined) return undefined;
        values[variables[i]!] = value;
      }
      return Object.freeze(values);
    },
    expand(values: Readonly<Record<string, string>>) {
      return literals.reduce(
        (text, literal, i) =>
          text + literal + (i < variables.length ? encodeURIComponent(String(values[variables[i]!] ?? '')) : ''),
        '',
      );
    },
  };
}

/** A matched variable, percent-decoded; undefined for one that is malformed or could climb out of the template's place. */
function decodeVariable(raw: string): string | undefined {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  // eslint-disable-next-line no-control-regex -- control characters are matched on purpose, to refuse or escape them
  if (value === '.' || value === '..' || /[/\\\u0000-\u001f\u007f]/.test(value)) return undefined;
  return value;
}
