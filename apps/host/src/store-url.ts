/**
 * `postgres://…?schema=name` keeps the host's tables in that schema, so several deployments (or test
 * runs) can share one database; the parameter is Aptix's, so it is taken off before `pg` sees the URL.
 */
export function splitSchema(db: string): { url: string; schema?: string } {
  if (!/^postgres(ql)?:\/\//.test(db)) return { url: db };
  const parsed = new URL(db);
  const schema = parsed.searchParams.get('schema');
  if (schema === null) return { url: db };
  parsed.searchParams.delete('schema');
  return { url: parsed.href, schema };
}

/** A database URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
