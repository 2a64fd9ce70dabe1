import type { DefinedPrompt, DefinedResource, PackageUnits } from '@aptix/tool-contract';
import { unitSource } from './bridged-units.js';

/** A unit's identity across listings: its name and everything it was built from. */
const identity = (unit: DefinedPrompt | DefinedResource) => `${unit.name}\u0000${unitSource(unit) ?? ''}`;

/**
 * The prompts and resources a bridge offers now, when a host follows them: a new listing keeps the
 * object of every unit listed again unchanged (the host then keeps it as it is, subscriptions
 * included), and reports only when what is offered changed.
 */
export class LiveUnitList {
  #prompts: readonly DefinedPrompt[] = [];
  #resources: readonly DefinedResource[] = [];

  /** Records the units offered at start-up. */
  offer(units: PackageUnits): void {
    this.#prompts = [...(units.prompts ?? [])] as DefinedPrompt[];
    this.#resources = [...(units.resources ?? [])] as DefinedResource[];
  }

  /** A new listing: the whole lists to report, or undefined when nothing offered changed. */
  follow(
    units: PackageUnits,
  ): { prompts: readonly DefinedPrompt[]; resources: readonly DefinedResource[] } | undefined {
    const prompts = keep(this.#prompts, (units.prompts ?? []) as readonly DefinedPrompt[]);
    const resources = keep(this.#resources, (units.resources ?? []) as readonly DefinedResource[]);
    if (same(prompts, this.#prompts) && same(resources, this.#resources)) return undefined;
    this.#prompts = prompts;
    this.#resources = resources;
    return { prompts, resources };
  }
}

/** The new list, with the old object for every unit built from the same definition. */
function keep<T extends DefinedPrompt | DefinedResource>(old: readonly T[], next: readonly T[]): readonly T[] {
  const byIdentity = new Map(old.map((unit) => [identity(unit), unit]));
  return Object.freeze(next.map((unit) => byIdentity.get(identity(unit)) ?? unit));
}

function same<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((unit, index) => unit === b[index]);
}
