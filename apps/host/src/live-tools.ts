import type { Logger } from 'pino';
import {
  describeThrown,
  ToolContractError,
  type AgentToolRegistry,
  type AnyAgentToolClass,
  type ToolList,
} from '@aptix/tool-contract';
import { ALWAYS_OFFERED_TOOLS, MODE_KEY_PATTERN, type ModeCatalog } from '@aptix/tool-mode-catalog';
import { ChangeBell } from './change-bell.js';
import type { LoadedToolPackage } from './tool-packages.js';

const MODE_KEY = new RegExp(MODE_KEY_PATTERN);

/** What following a package needs of the composed host. */
export interface LiveToolsTarget {
  readonly registry: AgentToolRegistry;
  readonly catalog: ModeCatalog;
  readonly logger: Logger;
  /** Builds one instance of the class from the container; throws a message naming what is missing. */
  readonly build: (toolClass: AnyAgentToolClass, toolPackage: LoadedToolPackage) => void;
}

/** One package the host follows: its `toolsChanged` callback, and the tools it offers now. */
export interface ToolPackageFollower {
  readonly toolsChanged: (tools: ToolList) => void;
  /** The package took `toolsChanged` from its ToolPackageHost: it may change its tools while the host runs. */
  watched(): void;
  /** Called once the package is loaded, with what loading it gave. */
  loaded(toolPackage: LoadedToolPackage): void;
}

interface Followed {
  toolPackage: LoadedToolPackage | undefined;
  /** The tools it offers now, by name. */
  readonly owned: Map<string, AnyAgentToolClass>;
  /** A list reported before the host could apply it (while it was still starting). */
  pending: ToolList | undefined;
  /** Whether the package read `toolsChanged`; a package that never did cannot change its tools. */
  watched: boolean;
}

/**
 * Tools that change while the host runs: a package (a bridged MCP server) reports its whole new tool
 * list through `ToolPackageHost.toolsChanged`, and the host applies the difference in one synchronous
 * step, so no call or listing ever sees half of it:
 * - a new class is checked against the contract and built from the container, as at start-up; one that
 *   fails is logged with the reason and not offered (the rest are). A name another package holds is
 *   refused the same way (DUPLICATE_TOOL): a package can never take over a tool it does not own;
 * - it joins the modes its class declares (`static Modes`) that the catalog has;
 * - a class no longer listed stops being offered; calls by its name get a message saying why;
 * - listeners (MCP sessions) are told when the turn ends (ChangeBell), and caches keyed on the registry's revision drop.
 */
export class LiveTools {
  readonly #followed = new Set<Followed>();
  /** Tool name → the modes it joined after start-up. */
  readonly #joins = new Map<string, readonly string[]>();
  /** Tool name → why it is no longer offered. */
  readonly #retired = new Map<string, string>();
  readonly #bell = new ChangeBell<'tool'>((error) =>
    this.#target?.logger.error({ err: error }, 'a listener to tool changes failed'),
  );
  /** Names the catalog gives that no package offered at start-up: a live package may offer them later. */
  #awaited: ReadonlySet<string> = new Set();
  #target: LiveToolsTarget | undefined;
  #changed = false;

  /** A follower for one package entry; its `toolsChanged` goes into the package's ToolPackageHost. */
  follower(): ToolPackageFollower {
    const followed: Followed = { toolPackage: undefined, owned: new Map(), pending: undefined, watched: false };
    this.#followed.add(followed);
    return {
      toolsChanged: (tools) => {
        if (this.#target === undefined || followed.toolPackage === undefined) followed.pending = tools;
        else this.#apply(followed, tools);
      },
      watched: () => {
        followed.watched = true;
      },
      loaded: (toolPackage) => {
        followed.toolPackage = toolPackage;
        for (const toolClass of toolPackage.tools) followed.owned.set(toolClass.ToolName, toolClass);
      },
    };
  }

  /** Whether any package can change its tools while the host runs (then MCP list caching is off). */
  get mayChange(): boolean {
    return [...this.#followed].some((followed) => followed.toolPackage !== undefined && followed.watched);
  }

  /** The names of the loaded packages that may change their tools while the host runs. */
  livePackages(): string[] {
    return [...this.#followed]
      .filter((followed) => followed.toolPackage !== undefined && followed.watched)
      .map((followed) => followed.toolPackage!.name);
  }

  /**
   * Tools the catalog's modes name that no package offered at start-up (see composeHostCatalog): the
   * modes offer them once a live package does, and until then every mode's list leaves them out.
   */
  awaitTools(names: Iterable<string>): void {
    this.#awaited = new Set(names);
  }

  /** The host is composed: changes apply from now on, the ones reported meanwhile first. */
  attach(target: LiveToolsTarget): void {
    this.#target = target;
    for (const followed of this.#followed) {
      if (followed.toolPackage === undefined) {
        this.#followed.delete(followed); // an optional package that failed to load
        continue;
      }
      const pending = followed.pending;
      followed.pending = undefined;
      if (pending !== undefined) this.#apply(followed, pending);
    }
  }

  /**
   * The tools a mode offers now, once anything changed after start-up or the catalog names tools no
   * package offers yet; undefined otherwise (then the catalog's own selection is exact). The catalog's
   * tools that are registered, the tools that joined later, and the always-offered ones.
   */
  offered(mode: string): string[] | undefined {
    const target = this.#target;
    if ((!this.#changed && this.#awaited.size === 0) || target === undefined) return undefined;
    const { registry, catalog } = target;
    const names = new Set<string>();
    for (const name of catalog.getMode(mode)?.tools ?? []) if (registry.has(name)) names.add(name);
    for (const [name, modes] of this.#joins) if (modes.includes(mode) && registry.has(name)) names.add(name);
    for (const name of ALWAYS_OFFERED_TOOLS) names.add(name);
    return [...names];
  }

  /** The loaded package that offers `tool` now, its tools changed since start-up or not. */
  packageOf(tool: string): string | undefined {
    for (const followed of this.#followed) if (followed.owned.has(tool)) return followed.toolPackage?.name;
    return undefined;
  }

  /** Why a tool that was offered is no longer, for the answer to a call by its name. */
  retired(name: string): string | undefined {
    return this.#retired.get(name);
  }

  /**
   * Called after changes, once the turn of the event loop in which they happened ends (at most ten times
   * a second: see ChangeBell); returns the function that stops it.
   */
  onChange(listener: () => void): () => void {
    return this.#bell.listen(() => listener());
  }

  #apply(followed: Followed, tools: ToolList): void {
    const target = this.#target!;
    const toolPackage = followed.toolPackage!;
    const { registry, logger } = target;
    const log = { toolPackage: toolPackage.name };
    let list: AnyAgentToolClass[];
    try {
      if (!Array.isArray(tools)) throw new TypeError(`it is ${typeof tools}, not an array of tool classes`);
      list = [...(tools as readonly AnyAgentToolClass[])];
    } catch (error) {
      logger.error(
        log,
        `Tool package "${toolPackage.name}" reported a changed tool list the host cannot read (${describeThrown(error)}); its tools stay as they were.`,
      );
      return;
    }
    const next = new Map<string, AnyAgentToolClass>();
    for (const toolClass of list) {
      let name: unknown;
      try {
        name = toolClass.ToolName;
      } catch {
        name = undefined;
      }
      if (typeof name !== 'string' || next.has(name)) {
        logger.error(
          log,
          `Tool package "${toolPackage.name}" reported a tool the host cannot take: ${typeof name === 'string' ? `"${name}" twice` : 'a class without a ToolName'}; it is not offered.`,
        );
        continue;
      }
      next.set(name, toolClass);
    }

    let changed = false;
    for (const [name, toolClass] of followed.owned) {
      if (next.has(name)) continue;
      if (registry.get(name)?.toolClass === toolClass) registry.unregister(name);
      followed.owned.delete(name);
      this.#joins.delete(name);
      this.#retired.set(
        name,
        `Tool "${name}" from "${toolPackage.name}" is no longer offered: the package withdrew it ` +
          `while the host runs (a bridged MCP server no longer offers it, or its new definition ` +
          `failed the contract check; the host log says which).`,
      );
      logger.warn({ ...log, tool: name }, `Tool "${name}" from "${toolPackage.name}" is no longer offered.`);
      changed = true;
    }
    for (const [name, toolClass] of next) {
      const old = followed.owned.get(name);
      if (old === toolClass) continue;
      changed = true;
      if (old !== undefined && registry.get(name)?.toolClass === old) registry.unregister(name);
      followed.owned.delete(name);
      const refused = this.#admit(toolClass, toolPackage);
      if (refused !== undefined) {
        this.#joins.delete(name);
        this.#retired.set(name, `Tool "${name}" from "${toolPackage.name}" is not offered: ${refused}`);
        logger.error({ ...log, tool: name }, `Tool "${name}" from "${toolPackage.name}" is not offered: ${refused}`);
        continue;
      }
      followed.owned.set(name, toolClass);
      this.#retired.delete(name);
      this.#joins.set(name, this.#modes(toolClass, toolPackage));
      const named = this.#awaited.has(name)
        ? ` It joins the modes the catalog names it in (${this.#catalogModes(name).join(', ')}).`
        : '';
      logger.info(
        { ...log, tool: name },
        `Tool "${name}" from "${toolPackage.name}" is ${old === undefined ? 'now offered' : 'offered with its new definition'}.${named}`,
      );
    }
    if (!changed) return;
    this.#changed = true;
    this.#bell.ring(['tool']);
  }

  /** Registers and builds a class; the reason it cannot be offered, or undefined when it is. */
  #admit(toolClass: AnyAgentToolClass, toolPackage: LoadedToolPackage): string | undefined {
    const { registry, build } = this.#target!;
    try {
      registry.registerTool(toolClass);
    } catch (error) {
      if (error instanceof ToolContractError) return `it breaks the contract (${error.code}): ${error.message}`;
      return `inspecting it threw ${describeThrown(error)}`;
    }
    try {
      build(toolClass, toolPackage);
    } catch (error) {
      registry.unregister(toolClass.ToolName);
      return error instanceof Error ? error.message : describeThrown(error);
    }
    return undefined;
  }

  /** The catalog's modes that name a tool. */
  #catalogModes(name: string): string[] {
    return this.#target!.catalog.modes.filter((mode) => mode.tools.includes(name)).map((mode) => mode.key);
  }

  /** The modes of the catalog a class joins; others are logged and skipped, as at start-up. */
  #modes(toolClass: AnyAgentToolClass, toolPackage: LoadedToolPackage): readonly string[] {
    const { catalog, logger } = this.#target!;
    let modes: unknown;
    try {
      modes = (toolClass as { Modes?: unknown }).Modes;
    } catch {
      modes = undefined;
    }
    if (modes === undefined) return [];
    if (!Array.isArray(modes) || modes.some((key) => typeof key !== 'string' || !MODE_KEY.test(key))) {
      logger.warn(
        { toolPackage: toolPackage.name, tool: toolClass.ToolName },
        `Tool "${toolClass.ToolName}" declares Modes that are not a list of mode keys; it joins no mode.`,
      );
      return [];
    }
    const known = (modes as string[]).filter((key) => catalog.getMode(key) !== undefined);
    const unknown = (modes as string[]).filter((key) => catalog.getMode(key) === undefined);
    if (unknown.length > 0)
      logger.warn(
        { toolPackage: toolPackage.name, tool: toolClass.ToolName },
        `Tool "${toolClass.ToolName}" joins modes this host does not have (${unknown.join(', ')}); it joins ${known.length > 0 ? known.join(', ') : 'no mode'}.`,
      );
    return Object.freeze(known);
  }
}
