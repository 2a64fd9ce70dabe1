import type { ErrorObject } from 'ajv';

/** One offending field: where it is, and what was expected against what came. */
export interface ArgumentIssue {
  /** Dotted path of the field, e.g. `count` or `items.0.name`; `(arguments)` for the whole object. */
  readonly path: string;
  readonly problem: string;
}

// How ajv's errors become the messages a model or a person reads: one issue per offending field, with
// what was expected and what came.

/** One issue per offending field, in ajv's order, without the branch errors an `anyOf` already sums up. */
export function describeErrors(errors: readonly ErrorObject[], data: unknown, known: string): ArgumentIssue[] {
  const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const seen = new Set<string>();
  const issues: ArgumentIssue[] = [];
  for (const error of errors) {
    if (error.keyword !== 'anyOf' && anyOfPaths.has(error.instancePath) && error.schemaPath.includes('/anyOf/'))
      continue;
    const issue = describeError(error, data, known);
    const key = `${issue.path}\u0000${issue.problem}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return issues;
}

function describeError(error: ErrorObject, data: unknown, known: string): ArgumentIssue {
  const base = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: toPath(`${base}/${String(params.missingProperty)}`), problem: 'is required but was not sent' };
    case 'additionalProperties':
      return {
        path: toPath(`${base}/${String(params.additionalProperty)}`),
        problem:
          base === ''
            ? `is not an argument of this tool (its arguments: ${known || 'none'})`
            : 'is not an allowed property here',
      };
    case 'type': {
      const value = valueAt(data, base);
      // JSON has no Infinity or NaN; 1e400 parses to Infinity, which no number schema accepts.
      if (typeof value === 'number' && !Number.isFinite(value))
        return {
          path: toPath(base),
          problem: `must be a finite ${String(params.type)}, got ${String(value)}${Number.isNaN(value) ? '' : ' (is the number too large for JSON?)'}`,
        };
      return { path: toPath(base), problem: `must be ${String(params.type)}, got ${describe(value)}` };
    }
    case 'enum':
      return {
        path: toPath(base),
        problem: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, got ${describe(valueAt(data, base))}`,
      };
    case 'anyOf':
      return { path: toPath(base), problem: `does not match any allowed form, got ${describe(valueAt(data, base))}` };
    default:
      return { path: toPath(base), problem: `${error.message ?? 'is invalid'}, got ${describe(valueAt(data, base))}` };
  }
}

function toPath(pointer: string): string {
  if (pointer === '') return '(arguments)';
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function valueAt(data: unknown, pointer: string): unknown {
  if (pointer === '') return data;
  let current: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (current === null || typeof current !== 'object') return undefined;
    current = Object.prototype.hasOwnProperty.call(current, segment)
      ? (current as Record<string, unknown>)[segment]
      : undefined;
  }
  return current;
}

/** A short description of a value for an error message: never the whole of a huge string. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') {
    const shown =
      value.length > 40
        ? `${JSON.stringify(value.slice(0, 40)).slice(0, -1)}…" (${value.length} characters)`
        : JSON.stringify(value);
    return `string ${shown}`;
  }
  return `${typeof value} ${String(value)}`;
}
