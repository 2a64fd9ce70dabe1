import type { Logger } from 'pino';
import {
  describeThrown,
  PromptRegistry,
  ResourceRegistry,
  type RegisteredPrompt,
  type RegisteredResource,
} from '@aptix/tool-contract';
import type { ModeCatalog } from '@aptix/tool-mode-catalog';
import {
  admitUnits,
  heldBy,
  readReported,
  RetiredUnits,
  sameUnits,
  type RetiredUnit,
  type UnitKind,
} from '../live-units.js';
import { ChangeBell } from '../change-bell.js';
import type { LoadedToolPackage } from '../tool-packages.js';
import { ResourceView, UnitView } from './unit-view.js';

const KINDS = ['prompt', 'resource'] as const;
const key = (kind: UnitKind, name: string) => `${kind}\u0000${name}`;
/** Past this many units in one change, the log gets one line for them rather than one each. */
const LOGGED_ONE_BY_ONE = 20;

/** One package entry's units as offered now, by kind, and why the refused ones were refused (each logged once). */
interface Offered {
  prompt: readonly unknown[];
  resource: readonly unknown[];
  refused: Map<string, string>;
}

type AnyRegistry = PromptRegistry | ResourceRegistry;
type Owner = LoadedToolPackage | 'host';

/** One owner's registries (a package entry's, or the host's built-ins). */
interface Held {
  prompt: PromptRegistry;
  resource: ResourceRegistry;
}

/**
 * The prompts and resources a host serves, each owner's in registries of its own: a package's changed
 * list (`ToolPackageHost.unitsChanged`) is checked against what the others hold, registered in new
 * registries of that package's alone, and swapped in: one synchronous step that costs that package's
 * units, so no listing or read ever sees half of a change and a package that changes often does not
 * make the host check every other package's units again.
 */
export class UnitTable {
  readonly #held = new Map<Owner, Held>();
  readonly prompts = new UnitView<RegisteredPrompt>(() => [...this.#held.values()].map((held) => held.prompt));
  readonly resources = new ResourceView(() => [...this.#held.values()].map((held) => held.resource));
  /** Unit → the modes it declares (those of the catalog); absent: it declares none. */
  readonly declared = new Map<string, ReadonlySet<string>>();
  /** Every package entry's definitions offered now. */
  readonly #offered = new Map<LoadedToolPackage, Offered>();
  readonly retired = new RetiredUnits();
  readonly #revisions: Record<UnitKind, number> = { prompt: 0, resource: 0 };
  /** The logger of the last change, for a listener that fails when the bell rings after it. */
  #logger: Logger | undefined;
  readonly #bell = new ChangeBell<UnitKind>((error) =>
    this.#logger?.error({ err: error }, 'a listener to prompt and resource changes failed'),
  );
  /** Every owner's units in one registry of each kind, while the host starts: clashes throw as they always did. */
  #startUp: Held | undefined = { prompt: new PromptRegistry(), resource: new ResourceRegistry() };

  constructor(private readonly catalog: ModeCatalog) {}

  /** The package that declared a unit, by name (permissions name packages); undefined for a built-in. */
  packageOf(kind: UnitKind, name: string): string | undefined {
    const owner = this.#ownerOf(kind, name);
    return owner === undefined || owner === 'host' ? undefined : owner.name;
  }

  /** Counts the changes to a kind's units while the host runs (2025 sessions compare it to tell clients). */
  revision(kind: UnitKind): number {
    return this.#revisions[kind];
  }

  /**
   * Registers a package's unit at start-up, checked against every unit registered so far (all owners
   * share one registry of each kind here, so a clash throws as in a single registry).
   */
  addPackageUnit(kind: UnitKind, candidate: unknown, toolPackage: LoadedToolPackage, warn: (text: string) => void) {
    let offered = this.#offered.get(toolPackage);
    if (offered === undefined)
      this.#offered.set(toolPackage, (offered = { prompt: [], resource: [], refused: new Map() }));
    this.#check(kind, candidate);
    const unit = this.#register(this.#heldBy(toolPackage)[kind], kind, candidate, toolPackage, warn);
    offered[kind] = [...offered[kind], candidate];
    return unit;
  }

  /** Registers a built-in unit (after the packages'). */
  addBuiltin(kind: UnitKind, candidate: unknown): void {
    this.#check(kind, candidate);
    this.#heldBy('host')[kind].register(candidate);
  }

  /**
   * Calls `listener` with the kinds that changed, once the turn of the event loop in which they changed
   * ends (at most ten times a second: see ChangeBell); returns the function that stops it.
   */
  onChange(listener: (kinds: readonly UnitKind[]) => void): () => void {
    return this.#bell.listen(listener);
  }

  /**
   * A package's new lists: each kind given is checked (the contract, and names and addresses others
   * hold) and, when what is offered changes, the package's registry of that kind is built again and
   * swapped in. Returns the kinds that changed; listeners hear of them when the turn ends.
   */
  change(toolPackage: LoadedToolPackage, reported: unknown, logger: Logger): UnitKind[] {
    const offered = this.#offered.get(toolPackage) ?? { prompt: [], resource: [], refused: new Map<string, string>() };
    this.#offered.set(toolPackage, offered);
    const log = { toolPackage: toolPackage.name };
    const read = readReported(reported);
    if (typeof read === 'string') {
      logger.error(
        log,
        `Tool package "${toolPackage.name}" reported changed prompts or resources the host cannot read (${read}); its units stay as they were.`,
      );
      return [];
    }
    const changed: UnitKind[] = [];
    for (const kind of KINDS) {
      const list = read[kind];
      if (list === undefined || sameUnits(offered[kind], list)) continue;
      const others: Array<RegisteredPrompt | RegisteredResource> = [];
      for (const [owner, held] of this.#held) if (owner !== toolPackage) others.push(...held[kind].list());
      const { admitted, refused } = admitUnits(kind, list, heldBy(others));
      this.#logRefusals(kind, toolPackage, offered, refused, logger);
      if (sameUnits(offered[kind], admitted)) continue;
      const before = this.#heldBy(toolPackage)[kind].list() as Array<RegisteredPrompt | RegisteredResource>;
      this.#rebuild(kind, toolPackage, admitted, logger);
      this.#logChange(kind, toolPackage, before, logger);
      this.#revisions[kind]++;
      changed.push(kind);
    }
    this.#logger = logger;
    this.#bell.ring(changed);
    return changed;
  }

  #heldBy(owner: Owner): Held {
    let held = this.#held.get(owner);
    if (held === undefined)
      this.#held.set(owner, (held = { prompt: new PromptRegistry(), resource: new ResourceRegistry() }));
    return held;
  }

  #ownerOf(kind: UnitKind, name: string): Owner | undefined {
    for (const [owner, held] of this.#held) if (held[kind].has(name)) return owner;
    return undefined;
  }

  /** At start-up: a clash with another owner's unit throws, as one shared registry would (it is one). */
  #check(kind: UnitKind, candidate: unknown): void {
    if (this.#startUp === undefined)
      throw new Error('the host has started: packages change their units through unitsChanged');
    this.#startUp[kind].register(candidate);
  }

  /** Start-up is over: the shared registries that checked it go. */
  started(): void {
    this.#startUp = undefined;
  }

  #register(
    registry: AnyRegistry,
    kind: UnitKind,
    candidate: unknown,
    owner: LoadedToolPackage | undefined,
    warn: ((text: string) => void) | undefined,
  ): RegisteredPrompt | RegisteredResource {
    const unit = registry.register(candidate);
    if (unit.modes !== undefined) {
      const known = unit.modes.filter((mode) => this.catalog.getMode(mode) !== undefined);
      for (const mode of unit.modes.filter((other) => !known.includes(other)))
        warn?.(
          `Tool package "${owner?.name}": ${kind} "${unit.name}" asks to join mode "${mode}", which this host does not have; it joins the others.`,
        );
      this.declared.set(key(kind, unit.name), new Set(known));
    }
    return unit;
  }

  /** Registers the package's admitted definitions of a kind in a new registry, and swaps it in. */
  #rebuild(kind: UnitKind, toolPackage: LoadedToolPackage, admitted: readonly unknown[], logger: Logger): void {
    const held = this.#heldBy(toolPackage);
    const offered = this.#offered.get(toolPackage)!;
    const registry = kind === 'prompt' ? new PromptRegistry() : new ResourceRegistry();
    const warn = (text: string) => logger.warn({ toolPackage: toolPackage.name }, text);
    const kept: unknown[] = [];
    for (const unit of held[kind].list()) this.declared.delete(key(kind, unit.name));
    for (const candidate of admitted) {
      try {
        this.#register(registry, kind, candidate, toolPackage, warn);
        kept.push(candidate);
      } catch (error) {
        // Checked just before; a definition that answers differently when read again is refused here.
        logger.error(
          { toolPackage: toolPackage.name },
          `A ${kind} of "${toolPackage.name}" is not offered: registering it threw ${describeThrown(error)}`,
        );
      }
    }
    offered[kind] = kept;
    if (registry instanceof PromptRegistry) held.prompt = registry;
    else held.resource = registry;
  }

  #logRefusals(
    kind: UnitKind,
    toolPackage: LoadedToolPackage,
    offered: Offered,
    refused: ReadonlyArray<{ name: string; reason: string }>,
    logger: Logger,
  ): void {
    const now = new Map(refused.map(({ name, reason }) => [key(kind, name), reason]));
    const fresh = refused.filter(({ name, reason }) => offered.refused.get(key(kind, name)) !== reason);
    for (const [refusedKey, reason] of offered.refused)
      if (!refusedKey.startsWith(`${kind}\u0000`)) now.set(refusedKey, reason);
    offered.refused = now;
    for (const { name, reason } of fresh.slice(0, LOGGED_ONE_BY_ONE))
      logger.error(
        { toolPackage: toolPackage.name, [kind]: name },
        `${kind === 'prompt' ? 'Prompt' : 'Resource'} "${name}" from "${toolPackage.name}" is not offered: ${reason}`,
      );
    if (fresh.length > LOGGED_ONE_BY_ONE)
      logger.error(
        { toolPackage: toolPackage.name },
        `${fresh.length - LOGGED_ONE_BY_ONE} more ${kind}s from "${toolPackage.name}" are not offered (they break the contract, or others hold their names).`,
      );
  }

  /** Retires the package's units no longer offered, and logs what came and went. */
  #logChange(
    kind: UnitKind,
    toolPackage: LoadedToolPackage,
    before: ReadonlyArray<RegisteredPrompt | RegisteredResource>,
    logger: Logger,
  ): void {
    const now = new Set(this.#heldBy(toolPackage)[kind].names());
    const had = new Set(before.map((unit) => unit.name));
    const Kind = kind === 'prompt' ? 'Prompt' : 'Resource';
    const gone = before.filter((unit) => !now.has(unit.name));
    const added = [...now].filter((name) => !had.has(name));
    for (const unit of gone) {
      const message =
        `${Kind} "${unit.name}" from "${toolPackage.name}" is no longer offered: the package withdrew it while the ` +
        `host runs (a bridged MCP server no longer lists it, or its new definition failed the contract ` +
        `check; the host log says which).`;
      const retired: RetiredUnit = {
        owner: toolPackage.name,
        message,
        ...(unit.kind === 'resource' ? { resource: unit } : {}),
      };
      this.retired.add(kind, unit.name, retired);
    }
    for (const name of added) this.retired.delete(kind, name);
    const lines = [
      ...added.map((name) => ['info', `${Kind} "${name}" from "${toolPackage.name}" is now offered.`] as const),
      ...gone.map(
        (unit) => ['warn', `${Kind} "${unit.name}" from "${toolPackage.name}" is no longer offered.`] as const,
      ),
    ];
    for (const [level, line] of lines.slice(0, LOGGED_ONE_BY_ONE))
      logger[level]({ toolPackage: toolPackage.name }, line);
    if (lines.length > LOGGED_ONE_BY_ONE)
      logger.info(
        { toolPackage: toolPackage.name },
        `"${toolPackage.name}" changed its ${kind}s: ${added.length} now offered, ${gone.length} no longer offered (the first ${LOGGED_ONE_BY_ONE} changes are logged one by one).`,
      );
  }
}
