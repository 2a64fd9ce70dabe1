import { createHash } from 'node:crypto';
import { TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN } from '@aptix/tool-contract';

/** The length of the hash suffix that keeps two shortened or colliding names apart (`_` + 8 hex digits). */
const HASH_LENGTH = 8;

/**
 * A remote name in Aptix's alphabet: camelCase split at the capitals, every run of other characters
 * (`-`, `.`, `/`, spaces, non-ASCII letters) turned into one `_`, lower-cased, `_` trimmed at both ends.
 * @example snakeCase('get-tiny-image') // 'get_tiny_image'
 */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** The default prefix of a server: its name in snake_case (at most 32 characters), or `mcp`. */
export function defaultPrefix(serverName: string): string {
  return snakeCase(serverName).slice(0, 32).replace(/_+$/, '') || 'mcp';
}

function hash(remoteName: string): string {
  return createHash('sha256').update(remoteName).digest('hex').slice(0, HASH_LENGTH);
}

function withHash(base: string, remoteName: string): string {
  const suffix = `_${hash(remoteName)}`;
  return base.slice(0, TOOL_NAME_MAX_LENGTH - suffix.length).replace(/_+$/, '') + suffix;
}

/**
 * Gives every remote tool its Aptix name: `<prefix>_<remote name in snake_case>`, or the name `rename`
 * gives it. A name longer than 64 characters is cut and ends with a hash of the remote name; names that
 * would come out the same (`get-sum` and `get_sum`) all end with such a hash, so the result depends on
 * the names alone, never on the order the server lists them in, and no two remote tools share a name.
 */
export function aptixNames(
  prefix: string,
  remoteNames: readonly string[],
  rename: Readonly<Record<string, string>> = {},
): Map<string, string> {
  const proposed = new Map<string, string>();
  for (const remote of remoteNames) {
    const renamed = Object.hasOwn(rename, remote) ? rename[remote] : undefined;
    if (renamed !== undefined) {
      proposed.set(remote, renamed);
      continue;
    }
    const base = `${prefix}_${snakeCase(remote) || 'tool'}`;
    proposed.set(remote, base.length > TOOL_NAME_MAX_LENGTH ? withHash(base, remote) : base);
  }
  const counts = new Map<string, number>();
  for (const name of proposed.values()) counts.set(name, (counts.get(name) ?? 0) + 1);
  const names = new Map<string, string>();
  for (const [remote, name] of proposed) {
    const renamed = Object.hasOwn(rename, remote);
    names.set(remote, counts.get(name)! > 1 && !renamed ? withHash(name, remote) : name);
  }
  return names;
}

/** True when `name` meets Aptix's rule (`^[a-z0-9]+(_[a-z0-9]+)*$`, at most 64 characters). */
export function isAptixName(name: string): boolean {
  return name.length <= TOOL_NAME_MAX_LENGTH && TOOL_NAME_PATTERN.test(name);
}

/**
 * {@link aptixNames} for a tool list that changed while the host runs: a remote tool already offered
 * keeps its name (callers and modes know it by that name), and a new tool whose name is taken by
 * another gets the hashed form, so no name ever moves from one remote tool to another.
 */
export function stableNames(
  prefix: string,
  remoteNames: readonly string[],
  rename: Readonly<Record<string, string>> = {},
  kept: ReadonlyMap<string, string> = new Map(),
): Map<string, string> {
  const proposed = aptixNames(prefix, remoteNames, rename);
  const taken = new Set<string>();
  for (const remote of remoteNames) {
    const name = kept.get(remote);
    if (name !== undefined) taken.add(name);
  }
  const names = new Map<string, string>();
  for (const remote of remoteNames) {
    let name = kept.get(remote) ?? proposed.get(remote)!;
    if (!kept.has(remote) && taken.has(name)) name = withHash(name, remote);
    taken.add(name);
    names.set(remote, name);
  }
  return names;
}
