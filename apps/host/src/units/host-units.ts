import {
  completeUnit,
  describeThrown,
  readResource,
  renderPrompt,
  ToolContractError,
  UnitErrorCode,
  type AgentToolRegistry,
  type PromptMessage,
  type RegisteredPrompt,
  type RegisteredResource,
  type ResourceContents,
  type ToolInputChannel,
  type UnitOutcome,
} from '@aptix/tool-contract';
import type { ModeCatalog } from '@aptix/tool-mode-catalog';
import { closest } from '../http/validation-messages.js';
import type { LoadedToolPackage } from '../tool-packages.js';
import { builtinResources, modePromptName, modePrompts, TOOL_GUIDE_RESOURCE } from './builtin-units.js';
import { UnitWatches } from './unit-watches.js';
import { UnitTable } from './unit-table.js';
import type { ResourceView, UnitView } from './unit-view.js';
import { notFound } from './unit-not-found.js';
import { unitFollowerOf, type UnitFollower, type UnitKind } from '../live-units.js';

/** Who asks, and in which mode: what decides the prompts and resources a request sees. */
export interface UnitScope {
  readonly mode: string;
  readonly sessionId?: string;
  /** The tools the mode offers that the principal may call: their guides are the guides it sees. */
  readonly toolNames: readonly string[];
  /** Whether the principal may see a package's unit (its permissions' `tools` or `packages`). */
  mayUse(unit: string, toolPackage: string | undefined): boolean;
  /** Whether the principal may use a mode (its permissions' `modes`): the mode prompts it sees. */
  mayUseMode(mode: string): boolean;
}

/** What the configuration adds: units to modes, by mode key (`promptModes`, `resourceModes`). */
export interface UnitModeSettings {
  readonly promptModes?: Readonly<Record<string, readonly string[]>>;
  readonly resourceModes?: Readonly<Record<string, readonly string[]>>;
  /** Where the settings come from, for messages. */
  readonly source?: string;
  readonly maxBytes?: number;
  readonly timeoutMs?: number;
}

type Kind = UnitKind;
const key = (kind: Kind, name: string) => `${kind}\u0000${name}`;

/**
 * The prompts and resources a host serves: its packages' (checked against the contract when the host
 * starts, like tools) and the built-in ones (each mode's guidance as `mode_<key>`, each tool's usage
 * guide at `aptix://tools/<name>/guide`, the catalog at `aptix://modes`). Modes decide what a request
 * sees: a unit's declared `modes` plus those the configuration adds, or every mode when neither names one.
 * A package that takes `ToolPackageHost.unitsChanged` changes its units while the host runs (see
 * unit-table.ts): a get or read of one it withdrew says so.
 */
export class HostUnits {
  readonly #table: UnitTable;
  /** Unit → the modes the configuration adds it to (`promptModes`, `resourceModes`). */
  readonly #configured = new Map<string, Set<string>>();
  readonly #followers: UnitFollower[] = [];
  readonly watches: UnitWatches;

  private constructor(
    private readonly settings: UnitModeSettings,
    catalog: ModeCatalog,
  ) {
    this.#table = new UnitTable(catalog);
    this.watches = new UnitWatches((uri) => this.resources.resolve(uri)?.resource);
  }

  /** The prompts served now, every package's and the built-ins (a package's change swaps in its own registry). */
  get prompts(): UnitView<RegisteredPrompt> {
    return this.#table.prompts;
  }

  get resources(): ResourceView {
    return this.#table.resources;
  }

  /** Whether a package may change its prompts or resources while the host runs (then MCP declares `listChanged`). */
  get mayChange(): boolean {
    return this.#followers.some((follower) => follower.watched);
  }

  /** Counts the changes to a kind's units while the host runs (2025 sessions compare it to tell clients). */
  revision(kind: Kind): number {
    return this.#table.revision(kind);
  }

  /** Calls `listener` with the kinds that changed, after each change; returns the function that stops it. */
  onChange(listener: (kinds: readonly Kind[]) => void): () => void {
    return this.#table.onChange(listener);
  }

  /**
   * Registers every package's prompts and resources, then the built-in ones, and applies the modes.
   * From then on, the packages that follow their units change them here (see unit-table.ts).
   * @throws {Error} naming the package, the unit and the broken rule; or the configuration's unknown names.
   */
  static compose(
    toolPackages: readonly LoadedToolPackage[],
    registry: AgentToolRegistry,
    catalog: ModeCatalog,
    settings: UnitModeSettings = {},
  ): { units: HostUnits; warnings: string[] } {
    const units = new HostUnits(settings, catalog);
    const table = units.#table;
    const warnings: string[] = [];
    for (const toolPackage of toolPackages) {
      const owner = `Tool package "${toolPackage.name}"`;
      for (const [kind, list] of [
        ['prompt', toolPackage.prompts ?? []],
        ['resource', toolPackage.resources ?? []],
      ] as const) {
        for (const candidate of list) {
          try {
            table.addPackageUnit(kind, candidate, toolPackage, (text) => warnings.push(text));
          } catch (error) {
            if (error instanceof ToolContractError)
              throw new Error(`${owner} has a ${kind} that breaks the contract (${error.code}): ${error.message}`, {
                cause: error,
              });
            throw new Error(`${owner} has a ${kind} the host cannot read: ${describeThrown(error)}`, { cause: error });
          }
        }
      }
    }
    for (const prompt of modePrompts(catalog)) table.addBuiltin('prompt', prompt);
    const skipped = catalog.modes.filter((mode) => modePromptName(mode.key) === undefined).map((mode) => mode.key);
    if (skipped.length > 0)
      warnings.push(
        `Modes ${skipped.join(', ')} have no mode_<key> prompt: the name would pass the name rule's 64 characters.`,
      );
    for (const resource of builtinResources(registry, catalog)) table.addBuiltin('resource', resource);
    units.#configure('prompt', settings.promptModes, catalog);
    units.#configure('resource', settings.resourceModes, catalog);
    table.started();
    // From here on, a package's changed units apply (the ones reported during start-up first).
    for (const toolPackage of toolPackages) {
      const follower = unitFollowerOf(toolPackage);
      if (follower === undefined) continue;
      units.#followers.push(follower);
      follower.attach((reported) => {
        const changed = table.change(toolPackage, reported, follower.logger);
        if (changed.includes('resource')) units.watches.refresh();
      });
    }
    return { units, warnings };
  }

  #configure(kind: Kind, byMode: Readonly<Record<string, readonly string[]>> | undefined, catalog: ModeCatalog): void {
    const registry = kind === 'prompt' ? this.prompts : this.resources;
    const where = `${kind}Modes in ${this.settings.source ?? 'the configuration'}`;
    for (const [mode, names] of Object.entries(byMode ?? {})) {
      if (catalog.getMode(mode) === undefined)
        throw new Error(
          `${where} names mode "${mode}", which does not exist. Valid modes: ${catalog.keys.join(', ')}.`,
        );
      for (const name of names) {
        if (!registry.has(name)) {
          const guess = closest(name, registry.names());
          throw new Error(
            `${where} adds ${kind} "${name}" to mode "${mode}", but no package offers a ${kind} of that name.${guess === undefined ? '' : ` Did you mean "${guess}"?`} Fix: correct the name there.`,
          );
        }
        const modes = this.#configured.get(key(kind, name)) ?? new Set<string>();
        modes.add(mode);
        this.#configured.set(key(kind, name), modes);
      }
    }
  }

  #visible(kind: Kind, name: string, scope: UnitScope): boolean {
    const declared = this.#table.declared.get(key(kind, name));
    const configured = this.#configured.get(key(kind, name));
    if (
      (declared !== undefined || configured !== undefined) &&
      !declared?.has(scope.mode) &&
      !configured?.has(scope.mode)
    )
      return false;
    const owner = this.#table.packageOf(kind, name);
    if (owner !== undefined) return scope.mayUse(name, owner);
    // Built-ins: a mode's guidance for a principal that may use the mode; guides follow their tools.
    if (kind === 'prompt' && name.startsWith('mode_')) return scope.mayUseMode(name.slice('mode_'.length));
    return true;
  }

  /** Whether any resource can be subscribed to (the `resources.subscribe` capability). */
  get subscribable(): boolean {
    return this.resources.list().some((resource) => resource.subscribable);
  }

  /** The prompts a scope sees, in registration order (the packages' first). */
  promptsIn(scope: UnitScope): RegisteredPrompt[] {
    return this.prompts.list().filter((prompt) => this.#visible('prompt', prompt.name, scope));
  }

  /** The resources a scope sees at a fixed URI, with one entry per tool guide. */
  resourcesIn(scope: UnitScope): Array<{ resource: RegisteredResource; uri: string; name: string; title?: string }> {
    const listed: Array<{ resource: RegisteredResource; uri: string; name: string; title?: string }> = [];
    for (const resource of this.resources.list()) {
      if (!this.#visible('resource', resource.name, scope)) continue;
      if (resource.uri !== undefined) listed.push({ resource, uri: resource.uri, name: resource.name });
      else if (resource.name === TOOL_GUIDE_RESOURCE)
        for (const tool of scope.toolNames)
          listed.push({
            resource,
            uri: resource.template!.expand({ name: tool }),
            name: `${tool}_guide`,
            title: `${tool} usage guide`,
          });
    }
    return listed;
  }

  /** The resource templates a scope sees. */
  templatesIn(scope: UnitScope): RegisteredResource[] {
    return this.resources.templates().filter((resource) => this.#visible('resource', resource.name, scope));
  }

  /** The prompt by name, if the scope sees it. */
  prompt(name: string, scope: UnitScope): RegisteredPrompt | undefined {
    const prompt = this.prompts.get(name);
    return prompt !== undefined && this.#visible('prompt', name, scope) ? prompt : undefined;
  }

  /** What serves `uri` for this scope: a resource it sees (a tool guide only of a tool it sees). */
  resolve(uri: string, scope: UnitScope): ReturnType<ResourceView['resolve']> {
    const found = this.resources.resolve(uri);
    if (found === undefined || !this.#visible('resource', found.resource.name, scope)) return undefined;
    if (found.resource.name === TOOL_GUIDE_RESOURCE && !scope.toolNames.includes(found.variables.name!))
      return undefined;
    return found;
  }

  async render(
    name: string,
    args: unknown,
    scope: UnitScope,
    signal?: AbortSignal,
    input?: ToolInputChannel,
  ): Promise<UnitOutcome<{ description: string; messages: PromptMessage[] }>> {
    const prompt = this.prompt(name, scope);
    if (prompt === undefined) return this.#notFound('prompt', name, scope);
    // A render that may ask the client gets what the caller can answer (see mcp/prompt-input.ts).
    return renderPrompt(prompt, args, { ...this.#options(scope, signal), ...(input === undefined ? {} : { input }) });
  }

  async read(uri: string, scope: UnitScope, signal?: AbortSignal): Promise<UnitOutcome<ResourceContents[]>> {
    if (typeof uri !== 'string' || uri.length === 0)
      return { ok: false, code: UnitErrorCode.INVALID_URI, message: 'Give the URI of the resource to read.' };
    const found = this.resolve(uri, scope);
    if (found === undefined) return this.#notFound('resource', uri, scope);
    return readResource(found.resource, uri, found.variables, this.#options(scope, signal));
  }

  /** Completions for a prompt argument or a template variable (a tool guide's `name` completes from the scope's tools). */
  async complete(
    ref: { kind: Kind; name: string },
    argument: string,
    value: string,
    context: Readonly<Record<string, string>>,
    scope: UnitScope,
    signal?: AbortSignal,
  ): Promise<UnitOutcome<{ values: string[]; total: number; hasMore: boolean }>> {
    const unit =
      ref.kind === 'prompt'
        ? this.prompt(ref.name, scope)
        : this.templatesIn(scope).find(
            (resource) => resource.template!.template === ref.name || resource.name === ref.name,
          );
    if (unit === undefined) return this.#notFound(ref.kind, ref.name, scope);
    const names = unit.kind === 'prompt' ? unit.arguments.map((arg) => arg.name) : unit.template!.variables;
    if (!names.includes(argument))
      return {
        ok: false,
        code: UnitErrorCode.INVALID_ARGUMENTS,
        message:
          `${unit.kind === 'prompt' ? 'Prompt' : 'Resource template'} "${ref.name}" has no ` +
          `${unit.kind === 'prompt' ? 'argument' : 'variable'} "${String(argument).slice(0, 64)}". It ` +
          `has: ${names.join(', ') || 'none'}.`,
      };
    if (unit.kind === 'resource' && unit.name === TOOL_GUIDE_RESOURCE) {
      const values = scope.toolNames.filter((tool) => tool.startsWith(value));
      return { ok: true, value: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } };
    }
    return completeUnit(unit, argument, value, context, this.#options(scope, signal));
  }

  #options(scope: UnitScope, signal: AbortSignal | undefined) {
    return {
      mode: scope.mode,
      ...(scope.sessionId === undefined ? {} : { sessionId: scope.sessionId }),
      ...(signal === undefined ? {} : { signal }),
      ...(this.settings.maxBytes === undefined ? {} : { maxBytes: this.settings.maxBytes }),
      ...(this.settings.timeoutMs === undefined ? {} : { timeoutMs: this.settings.timeoutMs }),
    };
  }

  #notFound(kind: Kind, name: string, scope: UnitScope): { ok: false; code: UnitErrorCode; message: string } {
    return notFound(kind, name, scope, this.#table.retired, () => this.promptsIn(scope).map((prompt) => prompt.name));
  }
}
