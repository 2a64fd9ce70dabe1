/** One accepted API key. The name, never the key, appears in logs and in what the host records. */
export interface ApiKey {
  readonly name: string;
  readonly key: string;
}

/** Keys must be long enough that guessing is hopeless. */
export const MIN_KEY_LENGTH = 16;

/** How a key name is written: what the rule says in messages and docs, and the rule itself. */
export const KEY_NAME_RULE = '[A-Za-z0-9_.-]{1,64}';
const NAME = new RegExp(`^${KEY_NAME_RULE}$`);
/** An "=" at most this far into an entry (1-based) makes what comes before it a name, which must then be valid. */
const NAME_EQUALS_WITHIN = 65;

/**
 * Parses the accepted keys: `single` (APTIX_API_KEY or `apiKey`, named "default") and `entries`
 * (APTIX_API_KEYS or `apiKeys`; undefined when not set), each `<key>` or `<name>=<key>`. An unnamed
 * entry is named `key<n>` after its position. An "=" within an entry's first 65 characters starts a
 * name, which must match {@link KEY_NAME_RULE}: so `ops!=<key>` is refused rather than taken as one
 * unnamed key holding the name, and a key that itself holds "=" there is written `<name>=<key>`.
 * Entries that are set but hold no key at all are refused too. Throws a plain Error naming `source`
 * and the entry's position, never the key nor any part of the entry.
 *
 * @example
 * parseApiKeys(undefined, ['ops=0123456789abcdef0', 'ci=fedcba98765432100'], 'APTIX_API_KEYS')
 * // [{ name: 'ops', key: '0123456789abcdef0' }, { name: 'ci', key: 'fedcba98765432100' }]
 */
export function parseApiKeys(
  single: { key: string; source: string } | undefined,
  entries: readonly string[] | undefined,
  source: string,
): ApiKey[] {
  const keys: ApiKey[] = [];
  if (single !== undefined) {
    if (single.key.length < MIN_KEY_LENGTH)
      throw new Error(
        `${single.source} is shorter than ${MIN_KEY_LENGTH} characters. Fix: use a long random key, e.g. \`openssl rand -hex 32\`.`,
      );
    keys.push({ name: 'default', key: single.key });
  }
  if (entries !== undefined && entries.length === 0) {
    throw new Error(
      `${source} is set but holds no key (nothing but commas and spaces, or an empty list), so ` +
        `the host would start without the keys it was given. Fix: give at least one key, each ` +
        `"<name>=<key>" (comma-separated in APTIX_API_KEYS, e.g. ops=$(openssl rand -hex 32)), or ` +
        `remove ${source} to run without keys (on loopback only).`,
    );
  }
  (entries ?? []).forEach((entry, index) => {
    const where = `${source} entry ${index + 1}`;
    const equals = entry.indexOf('=');
    const named = equals >= 0 && equals < NAME_EQUALS_WITHIN;
    if (named && !NAME.test(entry.slice(0, equals))) {
      throw new Error(
        `${where} has an "=" within its first ${NAME_EQUALS_WITHIN} characters, so what comes ` +
          `before it is a key name, and it is not a valid one: a name is 1 to 64 letters, digits, ` +
          `"_", "." or "-" (${KEY_NAME_RULE}). Fix: write the entry as <name>=<key> with such a name; ` +
          `a key that itself contains "=" needs a name in front (<name>=<key>).`,
      );
    }
    const key = named ? entry.slice(equals + 1) : entry;
    const name = named ? entry.slice(0, equals) : `key${index + 1}`;
    if (key.length < MIN_KEY_LENGTH) {
      throw new Error(
        `${where} has a key shorter than ${MIN_KEY_LENGTH} characters. Fix: use a long random key (\`openssl rand -hex 32\`); a key that itself contains "=" needs a name in front: <name>=<key>.`,
      );
    }
    if (/[\s,]/.test(key))
      throw new Error(
        `${where} has a key with a space or a comma. Fix: use a key of letters, digits and symbols only (\`openssl rand -hex 32\`).`,
      );
    if (keys.some((other) => other.name === name))
      throw new Error(`${where} repeats the key name "${name}". Fix: give each key its own name.`);
    if (keys.some((other) => other.key === key))
      throw new Error(
        `${where} repeats a key already accepted (as "${keys.find((other) => other.key === key)!.name}"). Fix: list each key once.`,
      );
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
