import picomatch from 'picomatch';

/**
 * Who may do what (issue 32). A principal is a named API key (its name, never the key); the
 * configuration's `principals` gives each its permissions. A key without an entry, and the loopback
 * host without keys (one-user developer mode), may do everything, except that nobody decides an
 * approval they asked for themselves (separation of duties; `approvals.allowSelfApproval` lifts it
 * per tool, for development).
 */

/** A principal's permissions as the configuration file writes them; every field optional. */
export interface PrincipalEntry {
  /** Tools it may call and see, by name; `*` and `?` patterns, a leading `!` excludes (default: every tool). */
  readonly tools?: readonly string[];
  /** Tool packages whose tools it may call and see, by package name, the same patterns. */
  readonly packages?: readonly string[];
  /** Modes it may move a session into, the same patterns (default: every mode). */
  readonly modes?: readonly string[];
  /** Whether it may decide approvals: `true`, `false`, or the tools whose approvals it may decide (default false). */
  readonly approve?: boolean | readonly string[];
  /** Whether it may use the admin routes (the approvals list, the packages list) and the console (default false). */
  readonly admin?: boolean;
  /** The agent sessions it may read and change: its own (default), or every principal's (`all`). */
  readonly sessions?: 'own' | 'all';
}

/** A set of patterns, `!` excluding: a name matches when an including pattern does and no excluding one does. */
class Patterns {
  readonly #include: (name: string) => boolean;
  readonly #exclude: (name: string) => boolean;

  constructor(readonly source: readonly string[]) {
    const included = source.filter((pattern) => !pattern.startsWith('!'));
    const excluded = source.filter((pattern) => pattern.startsWith('!')).map((pattern) => pattern.slice(1));
    this.#include = included.length === 0 ? () => false : picomatch(included, { dot: true });
    this.#exclude = excluded.length === 0 ? () => false : picomatch(excluded, { dot: true });
  }

  matches(name: string): boolean {
    return this.#include(name) && !this.#exclude(name);
  }
}

const EVERYTHING = new Patterns(['*']);
const NOTHING = new Patterns([]);

/** What one principal may do. */
export class Permissions {
  /** Everything: a key without an entry, or the loopback host without keys. */
  static readonly ALL = new Permissions(undefined, undefined);

  readonly #tools: Patterns;
  readonly #packages: Patterns;
  readonly #modes: Patterns;
  readonly #approve: Patterns;
  readonly admin: boolean;
  /** Whether it reads and changes every principal's sessions, not only its own. */
  readonly allSessions: boolean;

  /** `name` undefined with `entry` undefined: every permission. */
  constructor(
    readonly name: string | undefined,
    entry: PrincipalEntry | undefined,
  ) {
    const configured = entry !== undefined;
    const tools = entry?.tools;
    const packages = entry?.packages;
    // Without either list, every tool; with one of them, what it names.
    this.#tools =
      !configured || (tools === undefined && packages === undefined) ? EVERYTHING : new Patterns(tools ?? []);
    this.#packages = packages === undefined ? NOTHING : new Patterns(packages);
    this.#modes = entry?.modes === undefined ? EVERYTHING : new Patterns(entry.modes);
    const approve = configured ? (entry.approve ?? false) : true;
    this.#approve = approve === true ? EVERYTHING : approve === false ? NOTHING : new Patterns(approve);
    this.admin = configured ? entry.admin === true : true;
    this.allSessions = configured ? entry.sessions === 'all' : true;
  }

  /** Whether it may call (and see) a tool, given the package that provides it. */
  mayCall(tool: string, toolPackage?: string): boolean {
    return this.#tools.matches(tool) || (toolPackage !== undefined && this.#packages.matches(toolPackage));
  }

  mayUseMode(mode: string): boolean {
    return this.#modes.matches(mode);
  }

  mayDecide(tool: string): boolean {
    return this.#approve.matches(tool);
  }

  /** What a cached tool list is kept under: principals with the same key see the same list. */
  get listKey(): object {
    return this;
  }

  /**
   * Whether it may read and change a session owned by `owner`: its own, one owned by no principal (made
   * by a host without keys, or before sessions had owners), or any with `sessions: "all"`.
   */
  maySee(owner: string | null): boolean {
    return owner === null || owner === this.name || this.allSessions;
  }
}

/** Each principal's permissions by key name, checked against the accepted keys' names. */
export class PrincipalTable {
  readonly #byName = new Map<string, Permissions>();
  readonly #selfApproval: Patterns;

  /**
   * @throws Error naming a principal entry that names no accepted key (a typo would leave that key with every permission).
   */
  constructor(
    entries: Readonly<Record<string, PrincipalEntry>>,
    keyNames: readonly string[],
    allowSelfApproval: readonly string[],
    /** The permissions of an OAuth token's principal (auth/token-principals.ts); undefined for a key's name. */
    private readonly tokens?: (principal: string) => Permissions | undefined,
  ) {
    for (const [name, entry] of Object.entries(entries)) {
      if (!keyNames.includes(name)) {
        throw new Error(
          `principals names "${name}", which is not the name of an accepted API key ` +
            `(${keyNames.length === 0 ? 'this host has no keys' : `keys: ${keyNames.join(', ')}`}). ` +
            `Fix: name a key "${name}=<key>" in APTIX_API_KEYS or apiKeys, or use a key's name.`,
        );
      }
      this.#byName.set(name, new Permissions(name, entry));
    }
    this.#selfApproval = new Patterns(allowSelfApproval);
  }

  /** The permissions of the principal a request authenticated as (undefined: no key, loopback); an OAuth token's come from its scopes. */
  of(principal: string | undefined): Permissions {
    if (principal === undefined) return Permissions.ALL;
    return this.#byName.get(principal) ?? this.tokens?.(principal) ?? Permissions.ALL;
  }

  /** Whether the principal that asked for a call of `tool` may decide it too: only where allowSelfApproval names the tool. */
  allowsSelfApproval(tool: string): boolean {
    return this.#selfApproval.matches(tool);
  }
}
