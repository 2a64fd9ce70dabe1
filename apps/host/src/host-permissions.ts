import type { RegisteredTool } from '@aptix/tool-contract';
import { Permissions, type PrincipalTable } from './permissions.js';
import type { LoadedToolPackage } from './tool-packages.js';
import type { CallOutcome } from './host-api.js';

/** What a principal may not do, as a call's refusal. */
type Refused = Extract<CallOutcome, { kind: 'refused' }>;

/**
 * The host's side of permissions (issue 32): what a principal may call and see. Every surface asks
 * here: HTTP, both MCP revisions (calls, lists, the pair), so one rule holds everywhere.
 */
export class HostPermissions {
  #packageOf: ReadonlyMap<string, string> | undefined;
  readonly #lists = new WeakMap<readonly unknown[], Map<object, readonly unknown[]>>();

  constructor(
    private readonly principals: PrincipalTable,
    private readonly toolPackages: readonly LoadedToolPackage[],
    /** The packages whose tools change while the host runs (a bridged server's): asked for a tool loading did not give. */
    private readonly live?: { packageOf(tool: string): string | undefined },
  ) {}

  of(principal: string | undefined): Permissions {
    return this.principals.of(principal);
  }

  /** The package that provides a tool (bridged tools too, including those a bridged server adds later: their package is the bridge's entry). */
  packageOf(tool: string): string | undefined {
    this.#packageOf ??= new Map(
      this.toolPackages.flatMap((toolPackage) =>
        toolPackage.tools.map((toolClass) => [String(toolClass.ToolName), toolPackage.name] as const),
      ),
    );
    return this.#packageOf.get(tool) ?? this.live?.packageOf(tool);
  }

  mayCall(principal: string | undefined, tool: string): boolean {
    const permissions = this.principals.of(principal);
    return permissions === Permissions.ALL || permissions.mayCall(tool, this.packageOf(tool));
  }

  /** Why `principal` may not make this call (the tool, or the mode a mode change moves to), or undefined when it may. */
  refusal(principal: string, entry: RegisteredTool, args: unknown): Refused | undefined {
    const permissions = this.principals.of(principal);
    if (permissions === Permissions.ALL) return undefined;
    const name = entry.name;
    if (!permissions.mayCall(name, this.packageOf(name))) {
      return {
        kind: 'refused',
        code: 'FORBIDDEN',
        message: `Calling ${name} needs the permission tools: ${name}, which this principal does not have; it was not run.`,
      };
    }
    if (name === 'agent_change_mode') {
      const mode = modeArgument(args);
      if (mode !== undefined && !permissions.mayUseMode(mode)) {
        return {
          kind: 'refused',
          code: 'FORBIDDEN',
          message: `Moving a session into mode "${mode}" needs the permission modes: ${mode}, which this principal does not have; nothing changed.`,
        };
      }
    }
    return undefined;
  }

  /** A list of definitions (MCP, Responses or Chat Completions) with only the tools `principal` may call: the same list object for the same principal. */
  visible<T>(
    principal: string | undefined,
    definitions: readonly T[],
    nameOf: (definition: T) => string,
  ): readonly T[] {
    const permissions = this.principals.of(principal);
    if (permissions === Permissions.ALL) return definitions;
    let byPrincipal = this.#lists.get(definitions);
    if (byPrincipal === undefined) this.#lists.set(definitions, (byPrincipal = new Map()));
    let list = byPrincipal.get(permissions.listKey) as readonly T[] | undefined;
    if (list === undefined) {
      list = Object.freeze(
        definitions.filter((definition) => permissions.mayCall(nameOf(definition), this.packageOf(nameOf(definition)))),
      );
      byPrincipal.set(permissions.listKey, list);
    }
    return list;
  }
}

function modeArgument(args: unknown): string | undefined {
  let value = args;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  const mode = value !== null && typeof value === 'object' ? (value as { mode?: unknown }).mode : undefined;
  return typeof mode === 'string' ? mode : undefined;
}
