/**
 * Where two JSON values differ, as short lines such as `parameters.properties.name.description: "Name." → "Full name."`,
 * at most `limit` of them (then a count of the rest).
 *
 * @example jsonDifferences({ a: 1 }, { a: 2 }) // ['a: 1 → 2']
 */
export function jsonDifferences(before: unknown, after: unknown, limit = 8): string[] {
  const lines: string[] = [];
  let total = 0;
  const visit = (a: unknown, b: unknown, path: string) => {
    if (Object.is(a, b)) return;
    const bothObjects = isPlainObject(a) && isPlainObject(b);
    const bothArrays = Array.isArray(a) && Array.isArray(b);
    if (bothObjects) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
      for (const key of keys) visit(a[key], b[key], path === '' ? key : `${path}.${key}`);
      return;
    }
    if (bothArrays && JSON.stringify(a) !== JSON.stringify(b)) {
      if (a.length !== b.length) {
        record(path, a, b);
        return;
      }
      a.forEach((item, index) => visit(item, b[index], `${path}[${index}]`));
      return;
    }
    if (bothArrays) return;
    record(path, a, b);
  };
  const record = (path: string, a: unknown, b: unknown) => {
    total++;
    if (lines.length < limit) lines.push(`${path || '(root)'}: ${show(a)} → ${show(b)}`);
  };
  visit(before, after, '');
  if (total > lines.length) lines.push(`…and ${total - lines.length} more`);
  return lines;
}

function show(value: unknown): string {
  if (value === undefined) return '(absent)';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
