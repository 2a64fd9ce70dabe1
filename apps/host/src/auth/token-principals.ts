import { AsyncLocalStorage } from 'node:async_hooks';
import { Permissions, type PrincipalEntry } from '../permissions.js';

/**
 * OAuth principals (issue 32). A token's principal is named `oauth:<claim>`: API key names cannot hold
 * a colon, so a token can never pass for a key (nor see its sessions). What it may do comes from its
 * token's scopes, not from its name: the same subject may hold a narrow token in one client and a
 * wide one in another at the same time, so the permissions travel with the request (an
 * AsyncLocalStorage entered when the token is verified) rather than in a table by name.
 */
export const TOKEN_PRINCIPAL_PREFIX = 'oauth:';

/** Whether a principal name is a token's (and not an API key's). */
export function isTokenPrincipal(name: string): boolean {
  return name.startsWith(TOKEN_PRINCIPAL_PREFIX);
}

/** What a token may do: what any of its granted scopes grants. */
export class ScopedPermissions extends Permissions {
  readonly #parts: readonly Permissions[];
  readonly #listKey: object;
  readonly #modeParts: readonly Permissions[] | undefined;

  constructor(
    name: string,
    /** The token's scopes that the configuration names, sorted. */
    readonly scopes: readonly string[],
    parts: readonly Permissions[],
    listKey: object,
    /** The parts that limit modes; undefined: every mode. */
    modeParts?: readonly Permissions[],
  ) {
    super(name, {
      tools: [],
      approve: false,
      admin: parts.some((part) => part.admin),
      sessions: parts.some((part) => part.allSessions) ? 'all' : 'own',
    });
    this.#parts = parts;
    this.#listKey = listKey;
    this.#modeParts = modeParts;
  }

  override mayCall(tool: string, toolPackage?: string): boolean {
    return this.#parts.some((part) => part.mayCall(tool, toolPackage));
  }

  override mayUseMode(mode: string): boolean {
    return this.#modeParts === undefined || this.#modeParts.some((part) => part.mayUseMode(mode));
  }

  override mayDecide(tool: string): boolean {
    return this.#parts.some((part) => part.mayDecide(tool));
  }

  /** Tokens with the same scopes see the same tool lists, whoever they name. */
  override get listKey(): object {
    return this.#listKey;
  }
}

/** The most (principal, scopes) pairs kept; past it the oldest is dropped (and built again when it comes back). */
const MAX_KEPT = 10_000;

/**
 * The permissions of token principals, by the configuration's `oauth.scopes`: one object per
 * principal and scope set (so a principal's tool list is the same list from request to request), at
 * most {@link MAX_KEPT} of them.
 */
export class TokenPermissions {
  readonly #byScope = new Map<string, Permissions>();
  readonly #listKeys = new Map<string, object>();
  readonly #kept = new Map<string, ScopedPermissions>();

  readonly #limitsModes = new Set<string>();

  /**
   * A scope grants only what it writes: without tools or packages, no tool (a key's entry without them
   * allows every tool; a scope such as `admin` must not). A token's modes are limited by the scopes that
   * write modes; when none of its scopes does, every mode, as for a key.
   */
  constructor(scopes: Readonly<Record<string, PrincipalEntry>>) {
    for (const [scope, entry] of Object.entries(scopes)) {
      const grantsTools = entry.tools !== undefined || entry.packages !== undefined;
      this.#byScope.set(scope, new Permissions(scope, grantsTools ? entry : { ...entry, tools: [] }));
      if (entry.modes !== undefined) this.#limitsModes.add(scope);
    }
  }

  /** The scopes this host knows, in the configuration's order (Protected Resource Metadata's scopes_supported). */
  get known(): readonly string[] {
    return [...this.#byScope.keys()];
  }

  /** What `principal` may do with a token granting `granted` (scopes this host does not know grant nothing). */
  of(principal: string, granted: readonly string[]): ScopedPermissions {
    const scopes = [...new Set(granted.filter((scope) => this.#byScope.has(scope)))].sort();
    const scopeKey = scopes.join(' ');
    const key = `${principal}\n${scopeKey}`;
    const kept = this.#kept.get(key);
    if (kept !== undefined) return kept;
    let listKey = this.#listKeys.get(scopeKey);
    if (listKey === undefined) this.#listKeys.set(scopeKey, (listKey = Object.freeze({ scopes: scopeKey })));
    const limiting = scopes.filter((scope) => this.#limitsModes.has(scope));
    const permissions = new ScopedPermissions(
      principal,
      scopes,
      scopes.map((scope) => this.#byScope.get(scope)!),
      listKey,
      limiting.length === 0 ? undefined : limiting.map((scope) => this.#byScope.get(scope)!),
    );
    if (this.#kept.size >= MAX_KEPT) this.#kept.delete(this.#kept.keys().next().value!);
    this.#kept.set(key, permissions);
    return permissions;
  }
}

/**
 * Made when the first token is served, never on a host that serves none: on Node 20 and 22 an
 * AsyncLocalStorage switches on promise hooks for the whole process, which every request then pays for
 * (request-logging.test.ts checks that a host without OAuth makes none).
 */
let current: AsyncLocalStorage<ScopedPermissions> | undefined;
const NOTHING = Object.freeze({ scopes: null });

/** Runs `next` (and everything it starts) as the token principal `permissions` names. */
export function runAsToken<T>(permissions: ScopedPermissions, next: () => T): T {
  return (current ??= new AsyncLocalStorage<ScopedPermissions>()).run(permissions, next);
}

/**
 * The permissions of token principal `name` in the current request. Outside a request of that
 * principal nothing is known of its token, and it may do nothing.
 */
export function currentTokenPermissions(name: string): Permissions {
  const permissions = current?.getStore();
  return permissions !== undefined && permissions.name === name
    ? permissions
    : new ScopedPermissions(name, [], [], NOTHING);
}

/** For PrincipalTable: a token principal's permissions in the current request, undefined for any other name. */
export function tokenPrincipalPermissions(name: string): Permissions | undefined {
  return isTokenPrincipal(name) ? currentTokenPermissions(name) : undefined;
}
