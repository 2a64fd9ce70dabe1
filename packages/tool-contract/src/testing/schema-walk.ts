import type { JsonSchema } from '../schema.js';

/**
 * The dotted paths of every property, at any depth, that has no description: `filters.from`,
 * `items[].name`, `value|1.unit` (the second `anyOf` branch). The root's own properties come first.
 *
 * @example undescribedProperties(Type.Object({ a: Type.Object({ b: Type.String() }, { description: 'A.' }) })) // ['a.b']
 */
export function undescribedProperties(parameters: JsonSchema): string[] {
  const found: string[] = [];
  const visit = (node: unknown, path: string, seen: ReadonlySet<unknown>) => {
    if (node === null || typeof node !== 'object' || Array.isArray(node) || seen.has(node)) return;
    const schema = node as JsonSchema;
    const inner = new Set(seen).add(node);
    const prefix = path === '' ? '' : `${path}.`;
    if (isRecord(schema.properties)) {
      for (const [name, child] of Object.entries(schema.properties)) {
        const described = isRecord(child) && typeof child.description === 'string' && child.description.trim() !== '';
        if (!described) found.push(`${prefix}${name}`);
        visit(child, `${prefix}${name}`, inner);
      }
    }
    if (isRecord(schema.patternProperties)) {
      for (const [pattern, child] of Object.entries(schema.patternProperties))
        visit(child, `${prefix}/${pattern}/`, inner);
    }
    if (isRecord(schema.additionalProperties)) visit(schema.additionalProperties, `${prefix}*`, inner);
    if (Array.isArray(schema.items)) schema.items.forEach((child, index) => visit(child, `${path}[${index}]`, inner));
    else visit(schema.items, `${path}[]`, inner);
    for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
      const branches = schema[keyword];
      if (Array.isArray(branches)) branches.forEach((branch, index) => visit(branch, `${path}|${index}`, inner));
    }
    for (const keyword of ['$defs', 'definitions'] as const) {
      const definitions = schema[keyword];
      if (isRecord(definitions))
        for (const [name, child] of Object.entries(definitions)) visit(child, `${keyword}.${name}`, inner);
    }
  };
  visit(parameters, '', new Set());
  return found;
}

/** The properties declared at the root of the parameters. */
export function rootPropertyNames(parameters: JsonSchema): string[] {
  return isRecord(parameters.properties) ? Object.keys(parameters.properties) : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
