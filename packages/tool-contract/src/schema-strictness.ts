import type { ErrorObject } from 'ajv';
import { ajvFor } from './ajv.js';

/** What the contract checks of a schema beyond ajv's meta-schema: ajv's strict rules, without compiling, and readable error lists. */
const SUBSCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SUBSCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose subschemas apply to the same object as their parent, so may require its properties. */
const BRANCHES = new Set(['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else']);
const SUBSCHEMAS = new Set([
  'additionalProperties',
  'items',
  'additionalItems',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
]);

/**
 * What ajv's strict mode would refuse when compiling, found without compiling: compiling a validator
 * costs about 0.5 ms per tool, so the registry defers it to the first call and checks the rules here.
 */
export function findStrictSchemaProblems(schema: unknown, path: string): string[] {
  const problems: string[] = [];
  const known = ajvFor(schema).RULES.keywords;
  // `enclosing`: the properties of the object a branch (allOf, anyOf, oneOf, not, if, then, else) applies to.
  const visit = (node: unknown, at: string, enclosing?: ReadonlySet<string>) => {
    if (typeof node === 'boolean') return;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) {
      problems.push(`${at} is not a schema`);
      return;
    }
    const record = node as Record<string, unknown>;
    const own =
      record.properties !== null && typeof record.properties === 'object' ? Object.keys(record.properties) : [];
    const declared = own.length === 0 && enclosing !== undefined ? enclosing : new Set([...own, ...(enclosing ?? [])]);
    for (const [keyword, value] of Object.entries(record)) {
      if (known[keyword] !== true) problems.push(`${at}: unknown keyword '${keyword}'`);
      const branch = BRANCHES.has(keyword) ? declared : undefined;
      if (SUBSCHEMA_MAPS.has(keyword) && value && typeof value === 'object') {
        for (const [name, child] of Object.entries(value)) visit(child, `${at}.${name}`);
      } else if (SUBSCHEMA_LISTS.has(keyword) && Array.isArray(value)) {
        value.forEach((child, index) => visit(child, `${at}.${keyword}[${index}]`, branch));
      } else if (SUBSCHEMAS.has(keyword)) {
        if (Array.isArray(value)) value.forEach((child, index) => visit(child, `${at}.${keyword}[${index}]`, branch));
        else visit(value, `${at}.${keyword}`, branch);
      }
    }
    if (Array.isArray(record.required)) {
      for (const name of record.required) {
        if (typeof name === 'string' && !declared.has(name))
          problems.push(`${at}: required '${name}' is not among its properties`);
      }
    }
  };
  visit(schema, path);
  return problems;
}

/** ajv's errors as one line a tool author can act on (the first five). */
export function formatSchemaErrors(errors: readonly ErrorObject[], root: string): string {
  return errors
    .slice(0, 5)
    .map(
      (error) =>
        `${root}${error.instancePath.replace(/\//g, '.')} ${error.message ?? 'is invalid'}${error.keyword === 'additionalProperties' ? ` ('${String(error.params.additionalProperty)}')` : ''}`,
    )
    .join('; ');
}
