import type { Logger } from 'pino';
import {
  ContractErrorCode,
  describeThrown,
  inspectPrompt,
  inspectResource,
  ToolContractError,
  type ContractViolation,
  type PackageUnits,
  type RegisteredPrompt,
  type RegisteredResource,
} from '@aptix/tool-contract';
import type { LoadedToolPackage } from './tool-packages.js';

export type UnitKind = 'prompt' | 'resource';

/** A package's new lists as the host reads them: a kind left out stays as it is. */
export type ReportedUnits = { readonly [kind in UnitKind]?: readonly unknown[] };

/** Each loaded package's follower, for the unit catalog composed after loading (see HostUnits.compose). */
const followers = new WeakMap<LoadedToolPackage, UnitFollower>();

/**
 * One package entry's side of following its prompts and resources: the `unitsChanged` its
 * ToolPackageHost carries, and the list it reported while the host was still starting (applied once
 * the unit catalog is composed). Mirrors the tools' follower (live-tools.ts).
 */
export class UnitFollower {
  #pending: unknown;
  #apply: ((units: unknown) => void) | undefined;
  #watched = false;

  constructor(readonly logger: Logger) {}

  /** What the package's `unitsChanged` calls: applied now, or kept until the catalog exists. */
  readonly unitsChanged = (units: PackageUnits): void => {
    if (this.#apply === undefined) this.#pending = units;
    else this.#apply(units);
  };

  /** The package took `unitsChanged` from its ToolPackageHost: its units may change while the host runs. */
  watch(): (units: PackageUnits) => void {
    this.#watched = true;
    return this.unitsChanged;
  }

  get watched(): boolean {
    return this.#watched;
  }

  /** Called once the package is loaded: the catalog finds the follower by the package it loaded. */
  loaded(toolPackage: LoadedToolPackage): void {
    followers.set(toolPackage, this);
  }

  /** The catalog is composed: changes apply from now on, the one reported meanwhile first. */
  attach(apply: (units: unknown) => void): void {
    this.#apply = apply;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) apply(pending);
  }
}

/** The follower of a loaded package, when the host follows its units (a package loaded in process). */
export function unitFollowerOf(toolPackage: LoadedToolPackage): UnitFollower | undefined {
  return followers.get(toolPackage);
}

/**
 * Reads what a package reported: `{ prompts?, resources? }`, each an array when given. Reading is
 * guarded (a getter may throw, a proxy may lie): the reason it cannot be read, or the lists.
 */
export function readReported(units: unknown): ReportedUnits | string {
  try {
    if (typeof units !== 'object' || units === null)
      return `it is ${units === null ? 'null' : typeof units}, not { prompts?, resources? }`;
    const read = (field: 'prompts' | 'resources'): unknown[] | undefined | string => {
      const value = (units as Record<string, unknown>)[field];
      if (value === undefined) return undefined;
      if (!Array.isArray(value)) return `its ${field} is ${value === null ? 'null' : typeof value}, not an array`;
      return [...(value as unknown[])];
    };
    const prompts = read('prompts');
    const resources = read('resources');
    if (typeof prompts === 'string') return prompts;
    if (typeof resources === 'string') return resources;
    return {
      ...(prompts === undefined ? {} : { prompt: prompts }),
      ...(resources === undefined ? {} : { resource: resources }),
    };
  } catch (error) {
    return `reading it threw ${describeThrown(error)}`;
  }
}

/** Whether two lists hold the same definitions, in the same order. */
export function sameUnits(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((unit, index) => unit === b[index]);
}

/** What another package (or the host) holds of a kind: names (case-folded, as the registries compare them) and addresses. */
export interface HeldUnits {
  readonly names: ReadonlySet<string>;
  readonly addresses: ReadonlySet<string>;
}

export function heldBy(units: ReadonlyArray<RegisteredPrompt | RegisteredResource>): HeldUnits {
  const names = new Set<string>();
  const addresses = new Set<string>();
  for (const unit of units) {
    names.add(unit.name.toLowerCase());
    if (unit.kind === 'resource') addresses.add(unit.uri ?? unit.template!.template);
  }
  return { names, addresses };
}

/**
 * Checks a package's new list of one kind against the contract and against what others hold, as
 * start-up's registries would: the definitions that may be offered, and each refused one's name (or
 * its place in the list) with the reason. Names and addresses the list repeats: the first counts.
 */
export function admitUnits(
  kind: UnitKind,
  list: readonly unknown[],
  held: HeldUnits,
): { admitted: unknown[]; refused: Array<{ name: string; reason: string }> } {
  const admitted: unknown[] = [];
  const refused: Array<{ name: string; reason: string }> = [];
  const names = new Set<string>();
  const addresses = new Set<string>();
  list.forEach((candidate, index) => {
    let inspected: RegisteredPrompt | RegisteredResource | undefined;
    let problem: string | undefined;
    let named: string | undefined;
    try {
      const result = kind === 'prompt' ? inspectPrompt(candidate) : inspectResource(candidate);
      const first = result.violations[0] as ContractViolation | undefined;
      if (first !== undefined) {
        const error = new ToolContractError(result.violations as [ContractViolation, ...ContractViolation[]]);
        named = first.tool;
        problem = `it breaks the contract (${error.code}): ${error.message}`;
      } else inspected = 'prompt' in result ? result.prompt : (result as { resource?: RegisteredResource }).resource;
    } catch (error) {
      problem = `inspecting it threw ${describeThrown(error)}`;
    }
    const name = inspected?.name ?? (named || `#${index + 1} of the list`);
    if (problem === undefined && inspected !== undefined) {
      const folded = inspected.name.toLowerCase();
      const address = inspected.kind === 'resource' ? (inspected.uri ?? inspected.template!.template) : undefined;
      const code = kind === 'prompt' ? ContractErrorCode.DUPLICATE_PROMPT : ContractErrorCode.DUPLICATE_RESOURCE;
      if (held.names.has(folded))
        problem = `it breaks the contract (${code}): another package or the host offers a ${kind} named "${inspected.name}"`;
      else if (names.has(folded)) problem = `the package lists a ${kind} named "${inspected.name}" twice`;
      else if (address !== undefined && held.addresses.has(address))
        problem = `it breaks the contract (${code}): another package or the host offers a resource at "${address}"`;
      else if (address !== undefined && addresses.has(address))
        problem = `the package lists two resources at "${address}"`;
      names.add(folded);
      if (address !== undefined) addresses.add(address);
    }
    if (problem === undefined) admitted.push(candidate);
    else refused.push({ name, reason: problem });
  });
  return { admitted, refused };
}

/** Units withdrawn while the host runs, for the answer to a get or read of one; the oldest go past this many. */
export const MAX_RETIRED_UNITS = 1_000;

/** A withdrawn unit: who offered it, why it went, and (a resource) where it was. */
export interface RetiredUnit {
  readonly owner: string;
  readonly message: string;
  readonly resource?: RegisteredResource;
}

/** Withdrawn units by kind and name, bounded: a package that keeps renaming its units cannot grow it. */
export class RetiredUnits {
  readonly #byKey = new Map<string, RetiredUnit>();

  add(kind: UnitKind, name: string, unit: RetiredUnit): void {
    const key = `${kind}\u0000${name}`;
    this.#byKey.delete(key);
    this.#byKey.set(key, unit);
    if (this.#byKey.size > MAX_RETIRED_UNITS) this.#byKey.delete(this.#byKey.keys().next().value!);
  }

  /** It is offered again. */
  delete(kind: UnitKind, name: string): void {
    this.#byKey.delete(`${kind}\u0000${name}`);
  }

  prompt(name: string): RetiredUnit | undefined {
    return this.#byKey.get(`prompt\u0000${name}`);
  }

  /** The withdrawn resource that was at `uri` (its fixed URI, or a URI its template matched). */
  resourceAt(uri: string): RetiredUnit | undefined {
    for (const unit of [...this.#byKey.values()].reverse()) {
      const resource = unit.resource;
      if (resource === undefined) continue;
      if (resource.uri === uri || (resource.template !== undefined && resource.template.match(uri) !== undefined))
        return unit;
    }
    return undefined;
  }
}
