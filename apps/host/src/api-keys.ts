/** One accepted API key. The name, never the key, appears in logs and in what the host records. */
export interface ApiKey {
  readonly name: string;
  readonly key: string;
}

/** Keys must be long enough that guessing is hopeless. */
export const MIN_KEY_LENGTH = 16;
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Parses the accepted keys: `single` (APTIX_API_KEY or `apiKey`, named "default") and `entries`
 * (APTIX_API_KEYS or `apiKeys`), each `<key>` or `<name>=<key>`. An unnamed entry is named `key<n>`
 * after its position. Throws a plain Error naming `source` and the entry's position (never the key).
 *
 * @example
 * parseApiKeys(undefined, ['ops=0123456789abcdef0', 'ci=fedcba98765432100'], 'APTIX_API_KEYS')
 * // [{ name: 'ops', key: '0123456789abcdef0' }, { name: 'ci', key: 'fedcba98765432100' }]
 */
export function parseApiKeys(single: { key: string; source: string } | undefined, entries: readonly string[], source: string): ApiKey[] {
  const keys: ApiKey[] = [];
  if (single !== undefined) {
    if (single.key.length < MIN_KEY_LENGTH) throw new Error(`${single.source} is shorter than ${MIN_KEY_LENGTH} characters. Fix: use a long random key, e.g. \`openssl rand -hex 32\`.`);
    keys.push({ name: 'default', key: single.key });
  }
  entries.forEach((entry, index) => {
    const where = `${source} entry ${index + 1}`;
    const equals = entry.indexOf('=');
    const named = equals > 0 && NAME.test(entry.slice(0, equals));
    const key = named ? entry.slice(equals + 1) : entry;
    const name = named ? entry.slice(0, equals) : `key${index + 1}`;
    if (key.length < MIN_KEY_LENGTH) {
      throw new Error(`${where} has a key shorter than ${MIN_KEY_LENGTH} characters. Fix: use a long random key (\`openssl rand -hex 32\`); a key that itself contains "=" needs a name in front: <name>=<key>.`);
    }
    if (/[\s,]/.test(key)) throw new Error(`${where} has a key with a space or a comma. Fix: use a key of letters, digits and symbols only (\`openssl rand -hex 32\`).`);
    if (keys.some((other) => other.name === name)) throw new Error(`${where} repeats the key name "${name}". Fix: give each key its own name.`);
    if (keys.some((other) => other.key === key)) throw new Error(`${where} repeats a key already accepted (as "${keys.find((other) => other.key === key)!.name}"). Fix: list each key once.`);
    keys.push({ name, key });
  });
  return keys;
}

/** Splits `APTIX_API_KEYS`: comma-separated, blanks around entries ignored. */
export function splitKeyList(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}
