import type { RegisteredPrompt, RegisteredResource, ResourceRegistry } from '@aptix/tool-contract';

/**
 * The units of every owner as one registry, in order (the packages' in configuration order, then the
 * built-ins): what HostUnits reads. Live: a package's change swaps its own registry, and the view
 * sees it at once. Names and addresses are unique across owners (start-up's shared registries, then
 * `admitUnits`, see to it).
 */
export class UnitView<T extends RegisteredPrompt | RegisteredResource> {
  constructor(private readonly registries: () => Iterable<{ list(): unknown[]; get(name: string): unknown }>) {}

  get(name: string): T | undefined {
    for (const registry of this.registries()) {
      const unit = registry.get(name) as T | undefined;
      if (unit !== undefined) return unit;
    }
    return undefined;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Every unit, owners in order, each owner's in registration order. */
  list(): T[] {
    return [...this.registries()].flatMap((registry) => registry.list() as T[]);
  }

  names(): string[] {
    return this.list().map((unit) => unit.name);
  }

  get size(): number {
    let size = 0;
    for (const registry of this.registries()) size += registry.list().length;
    return size;
  }
}

/** The resources of every owner: `resolve` finds a fixed URI first, then the templates in order, as one ResourceRegistry would. */
export class ResourceView extends UnitView<RegisteredResource> {
  constructor(private readonly held: () => Iterable<ResourceRegistry>) {
    super(held);
  }

  templates(): RegisteredResource[] {
    return this.list().filter((resource) => resource.template !== undefined);
  }

  resolve(uri: string): ReturnType<ResourceRegistry['resolve']> {
    let templated: ReturnType<ResourceRegistry['resolve']>;
    for (const registry of this.held()) {
      const found = registry.resolve(uri);
      if (found === undefined) continue;
      if (found.resource.uri !== undefined) return found;
      templated ??= found;
    }
    return templated;
  }
}
