import { silentAdminLogger, type AdminLogger } from './admin-logger.js';
import { TOOL_NAME_MAX_LENGTH } from './contract-rules.js';
import { ContractErrorCode, ToolContractError, type ContractViolation } from './errors.js';
import { inspectPrompt, inspectResource, type InspectedPrompt, type InspectedResource } from './unit-rules.js';

/** A prompt the registry holds: everything read from it at registration. */
export type RegisteredPrompt = InspectedPrompt;
/** A resource the registry holds: everything read from it at registration. */
export type RegisteredResource = InspectedResource;

export interface UnitRegistryOptions {
  /** Where contract violations are logged before they are thrown. */
  readonly logger?: AdminLogger;
}

/** Shared by both registries: names unique case-insensitively, a revision counting changes, loud duplicates. */
abstract class UnitRegistry<T extends { readonly name: string }> {
  readonly #logger: AdminLogger;
  protected readonly units = new Map<string, T>();
  readonly #folded = new Map<string, string>();
  #revision = 0;

  constructor(options: UnitRegistryOptions) {
    this.#logger = options.logger ?? silentAdminLogger;
  }

  protected add(
    unit: T | undefined,
    violations: ContractViolation[],
    clash: (unit: T) => ContractViolation | undefined,
  ): T {
    if (unit !== undefined) {
      const found = clash(unit);
      if (found !== undefined) violations.push(found);
    }
    if (violations.length > 0 || unit === undefined) {
      for (const violation of violations)
        this.#logger.addError(`[UnitRegistry_Register__${violation.code}]`, violation.message, [
          ['Unit', violation.tool],
        ]);
      throw new ToolContractError(violations as [ContractViolation, ...ContractViolation[]]);
    }
    this.units.set(unit.name, unit);
    this.#folded.set(unit.name.toLowerCase(), unit.name);
    this.#revision++;
    return unit;
  }

  /** The registered unit whose name folds to the same lower case, if any. */
  protected sameName(name: string): T | undefined {
    const existing = this.#folded.get(name.toLowerCase());
    return existing === undefined ? undefined : this.units.get(existing);
  }

  /** A free name close to `name`: `name_v2`, `name_v3`, … */
  protected suggestName(name: string): string {
    for (let version = 2; ; version++) {
      const suffix = `_v${version}`;
      const candidate = name.slice(0, TOOL_NAME_MAX_LENGTH - suffix.length).replace(/_+$/, '') + suffix;
      if (!this.#folded.has(candidate.toLowerCase())) return candidate;
    }
  }

  get(name: string): T | undefined {
    return this.units.get(name);
  }

  has(name: string): boolean {
    return this.units.has(name);
  }

  /** The registered names, in registration order. */
  names(): string[] {
    return [...this.units.keys()];
  }

  /** Every unit, in registration order. */
  list(): T[] {
    return [...this.units.values()];
  }

  get size(): number {
    return this.units.size;
  }

  /** Counts the registrations: whoever caches something derived from the registry keys it on this. */
  get revision(): number {
    return this.#revision;
  }
}

/**
 * Holds prompts by name, each checked against the contract when registered (see `inspectPrompt`).
 * @example
 * const prompts = new PromptRegistry();
 * prompts.registerAll(toolPackage.prompts ?? []);
 */
export class PromptRegistry extends UnitRegistry<RegisteredPrompt> {
  constructor(options: UnitRegistryOptions = {}) {
    super(options);
  }

  /** Checks `candidate` and registers it; throws a ToolContractError naming every broken rule (nothing is registered then). */
  register(candidate: unknown): RegisteredPrompt {
    const { prompt, violations } = inspectPrompt(candidate);
    return this.add(prompt, violations, (unit) => {
      const existing = this.sameName(unit.name);
      return existing === undefined
        ? undefined
        : {
            code: ContractErrorCode.DUPLICATE_PROMPT,
            tool: unit.name,
            message: `Prompt already exists: "${unit.name}" clashes with "${existing.name}". Fix: register each prompt once, or use a different name like "${this.suggestName(unit.name)}".`,
          };
    });
  }

  /** Registers each in order; stops at the first that breaks the contract. */
  registerAll(candidates: Iterable<unknown>): RegisteredPrompt[] {
    return Array.from(candidates, (candidate) => this.register(candidate));
  }
}

/**
 * Holds resources by name, each checked against the contract when registered (see `inspectResource`).
 * Names, fixed URIs and templates are each unique. `resolve(uri)` finds what serves a URI: the fixed
 * URI first, then the templates in registration order.
 */
export class ResourceRegistry extends UnitRegistry<RegisteredResource> {
  readonly #byUri = new Map<string, RegisteredResource>();

  constructor(options: UnitRegistryOptions = {}) {
    super(options);
  }

  register(candidate: unknown): RegisteredResource {
    const { resource, violations } = inspectResource(candidate);
    const registered = this.add(resource, violations, (unit) => {
      const existing = this.sameName(unit.name);
      const address = unit.uri ?? unit.template!.template;
      const sameAddress = existing ?? this.list().find((other) => (other.uri ?? other.template!.template) === address);
      if (sameAddress === undefined) return undefined;
      return {
        code: ContractErrorCode.DUPLICATE_RESOURCE,
        tool: unit.name,
        message:
          existing !== undefined
            ? `Resource already exists: "${unit.name}" clashes with "${existing.name}". Fix: register each resource once, or use a different name like "${this.suggestName(unit.name)}".`
            : `Resource "${unit.name}" has the ${unit.uri === undefined ? 'URI template' : 'URI'} "${address}" of resource "${sameAddress.name}". Fix: give each resource its own address.`,
      };
    });
    if (registered.uri !== undefined) this.#byUri.set(registered.uri, registered);
    return registered;
  }

  registerAll(candidates: Iterable<unknown>): RegisteredResource[] {
    return Array.from(candidates, (candidate) => this.register(candidate));
  }

  /** The resources at a fixed URI, in registration order. */
  fixed(): RegisteredResource[] {
    return this.list().filter((resource) => resource.uri !== undefined);
  }

  /** The resources at a URI template, in registration order. */
  templates(): RegisteredResource[] {
    return this.list().filter((resource) => resource.template !== undefined);
  }

  /**
   * What serves `uri`, and the template's variables (percent-decoded), or undefined. Among `among`
   * only, when given (the resources a mode offers).
   */
  resolve(
    uri: string,
    among?: ReadonlySet<string>,
  ): { resource: RegisteredResource; variables: Readonly<Record<string, string>> } | undefined {
    const fixed = this.#byUri.get(uri);
    if (fixed !== undefined && (among === undefined || among.has(fixed.name)))
      return { resource: fixed, variables: {} };
    for (const resource of this.units.values()) {
      if (resource.template === undefined || (among !== undefined && !among.has(resource.name))) continue;
      const variables = resource.template.match(uri);
      if (variables !== undefined) return { resource, variables };
    }
    return undefined;
  }
}
