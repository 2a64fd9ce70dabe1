import { silentAdminLogger, type AdminLogger } from './admin-logger.js';
import type { AnyAgentToolClass, ToolAnnotations } from './agent-tool.js';
import { APPROVAL_META_KEY, type ApprovalPolicyKind } from './approval.js';
import { inspectToolClass, TOOL_NAME_MAX_LENGTH, type InspectedTool } from './contract-rules.js';
import { ContractErrorCode, ToolContractError, type ContractViolation } from './errors.js';
import type { DefinitionByFormat, DefinitionFormat, JsonSchema } from './schema.js';

/** A tool the registry holds: its class and everything read from it at registration. */
export interface RegisteredTool extends InspectedTool {
  readonly toolClass: AnyAgentToolClass;
}

/**
 * A registered tool. One class, so that every entry has the same hidden class: object literals with
 * getters get one each, and the executor and the host, which read entries of many tools on every call,
 * then read them through megamorphic lookups. The views inspectToolClass makes on first use stay lazy.
 */
class Registration implements RegisteredTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly usageMetadata: string;
  readonly strictDeclared: boolean;
  readonly timeoutMs: number | undefined;
  readonly taskSupport: RegisteredTool['taskSupport'];
  readonly taskInput: RegisteredTool['taskInput'];
  readonly releasesSignal: boolean;
  readonly annotations: ToolAnnotations | undefined;
  readonly approval: ApprovalPolicyKind;
  readonly approvalPolicy: RegisteredTool['approvalPolicy'];
  readonly outputSchema: JsonSchema | undefined;
  readonly #tool: InspectedTool;

  constructor(
    readonly toolClass: AnyAgentToolClass,
    tool: InspectedTool,
  ) {
    this.name = tool.name;
    this.description = tool.description;
    this.parameters = tool.parameters;
    this.usageMetadata = tool.usageMetadata;
    this.strictDeclared = tool.strictDeclared;
    this.timeoutMs = tool.timeoutMs;
    this.taskSupport = tool.taskSupport;
    this.taskInput = tool.taskInput;
    this.releasesSignal = tool.releasesSignal;
    this.annotations = tool.annotations;
    this.approval = tool.approval;
    this.approvalPolicy = tool.approvalPolicy;
    this.outputSchema = tool.outputSchema;
    this.#tool = tool;
    Object.freeze(this);
  }

  get canonicalSchema(): string {
    return this.#tool.canonicalSchema;
  }

  get strict(): boolean {
    return this.#tool.strict;
  }

  get strictView(): RegisteredTool['strictView'] {
    return this.#tool.strictView;
  }
}

/** What `list()` gives for each tool (Story 6.1 AC4, plus the usage metadata). */
export interface ToolListing {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly usageMetadata: string;
  readonly strict: boolean;
  readonly annotations: ToolAnnotations | undefined;
  /** Whether calls wait for a person's approval: always, never, or depending on the arguments. */
  readonly approval: ApprovalPolicyKind;
}

export interface AgentToolRegistryOptions {
  /** Where contract violations are logged before they are thrown. */
  readonly logger?: AdminLogger;
}

/**
 * Holds tool classes by name and checks each against the tool contract when it is registered.
 *
 * @example
 * const registry = new AgentToolRegistry({ logger });
 * registry.registerTools(tools);
 * const definitions = registry.definitions('responses');
 */
export class AgentToolRegistry {
  readonly #logger: AdminLogger;
  readonly #tools = new Map<string, RegisteredTool>();
  /** Lower-cased name → name: duplicates are found case-insensitively. */
  readonly #folded = new Map<string, string>();
  readonly #definitions = new Map<string, readonly unknown[]>();
  #revision = 0;

  constructor(options: AgentToolRegistryOptions = {}) {
    this.#logger = options.logger ?? silentAdminLogger;
  }

  /**
   * Checks `toolClass` against every contract rule and registers it. A violation is logged and thrown
   * as a {@link ToolContractError} naming the tool, the rule and the fix; nothing is registered then.
   */
  registerTool<C extends AnyAgentToolClass>(toolClass: C): RegisteredTool {
    const { tool, violations } = inspectToolClass(toolClass);
    if (tool !== undefined) {
      const existing = this.#folded.get(tool.name.toLowerCase());
      if (existing !== undefined) {
        const owner = this.#tools.get(existing)!.toolClass.name || 'another class';
        violations.push({
          code: ContractErrorCode.DUPLICATE_TOOL,
          tool: tool.name,
          message:
            `Tool already exists: "${tool.name}" (${toolClass.name}) clashes with "${existing}", ` +
            `registered by ${owner}. Fix: register each tool once, or use a different name like ` +
            `"${this.suggestName(tool.name)}".`,
        });
      }
    }
    if (violations.length > 0 || tool === undefined) {
      for (const violation of violations)
        this.#logger.addError(`[AgentToolRegistry_RegisterTool__${violation.code}]`, violation.message, [
          ['Tool', violation.tool],
        ]);
      throw new ToolContractError(violations as [ContractViolation, ...ContractViolation[]]);
    }
    const registered = new Registration(toolClass, tool);
    this.#tools.set(registered.name, registered);
    this.#folded.set(registered.name.toLowerCase(), registered.name);
    this.#changed();
    return registered;
  }

  /** Registers each class in order; stops at the first that breaks the contract. */
  registerTools(toolClasses: Iterable<AnyAgentToolClass>): RegisteredTool[] {
    return Array.from(toolClasses, (toolClass) => this.registerTool(toolClass));
  }

  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** The registered names, in registration order. */
  names(): string[] {
    return [...this.#tools.keys()];
  }

  get size(): number {
    return this.#tools.size;
  }

  /** Every tool's name, description, parameter schema and usage metadata, in registration order. */
  list(): ToolListing[] {
    return [...this.#tools.values()].map(
      ({ name, description, parameters, usageMetadata, strict, annotations, approval }) => ({
        name,
        description,
        parameters,
        usageMetadata,
        strict,
        annotations,
        approval,
      }),
    );
  }

  unregister(name: string): boolean {
    const tool = this.#tools.get(name);
    if (tool === undefined) return false;
    this.#tools.delete(name);
    this.#folded.delete(name.toLowerCase());
    this.#changed();
    return true;
  }

  /**
   * Counts the changes to the set of tools (each register and unregister). Whoever caches something
   * derived from the registry (a mode's tool names, a listing) keys it on this: a tool replaced by
   * another of the same name after start-up changes the revision, not the size.
   */
  get revision(): number {
    return this.#revision;
  }

  #changed(): void {
    this.#revision++;
    this.#definitions.clear();
  }

  /**
   * The model-facing definitions, in a stable order: registration order, or the order of `names`.
   * `responses` is the flat Responses API shape, `chat` the Chat Completions shape nested under
   * `function`, `mcp` an MCP tools/list entry. `strict` is always explicit. Cached until the next
   * register or unregister; the arrays are frozen and shared.
   */
  definitions<F extends DefinitionFormat>(format: F, names?: readonly string[]): readonly DefinitionByFormat[F][] {
    const key = names === undefined ? `${format}` : `${format}\u0000${names.join('\u0000')}`;
    let cached = this.#definitions.get(key);
    if (cached === undefined) {
      const selected = names === undefined ? [...this.#tools.values()] : names.map((name) => this.#require(name));
      cached = Object.freeze(selected.map((tool) => Object.freeze(toDefinition(tool, format))));
      this.#definitions.set(key, cached);
    }
    return cached as readonly DefinitionByFormat[F][];
  }

  #require(name: string): RegisteredTool {
    const tool = this.#tools.get(name);
    if (tool === undefined)
      throw new RangeError(
        `No tool named "${name}" is registered. Registered tools: ${this.names().join(', ') || 'none'}.`,
      );
    return tool;
  }

  /** A free name close to `name`: `name_v2`, `name_v3`, … (Story 6.1 AC3). */
  suggestName(name: string): string {
    for (let version = 2; ; version++) {
      const suffix = `_v${version}`;
      const candidate = name.slice(0, TOOL_NAME_MAX_LENGTH - suffix.length).replace(/_+$/, '') + suffix;
      if (!this.#folded.has(candidate.toLowerCase())) return candidate;
    }
  }
}

function toDefinition(tool: RegisteredTool, format: DefinitionFormat): DefinitionByFormat[DefinitionFormat] {
  const parameters = tool.strict ? tool.strictView.parameters : tool.parameters;
  switch (format) {
    case 'responses':
      return { type: 'function', name: tool.name, description: tool.description, parameters, strict: tool.strict };
    case 'chat':
      return {
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters, strict: tool.strict },
      };
    case 'mcp': {
      const annotations = tool.annotations
        ? Object.fromEntries(Object.entries(tool.annotations).filter(([, v]) => typeof v === 'boolean'))
        : undefined;
      const base =
        tool.outputSchema === undefined
          ? { name: tool.name, description: tool.description, inputSchema: tool.parameters }
          : {
              name: tool.name,
              description: tool.description,
              inputSchema: tool.parameters,
              outputSchema: tool.outputSchema,
            };
      const definition = annotations && Object.keys(annotations).length > 0 ? { ...base, annotations } : base;
      // A gated tool says so to MCP clients; tools without a policy keep their listing unchanged.
      return tool.approval === 'never' ? definition : { ...definition, _meta: { [APPROVAL_META_KEY]: tool.approval } };
    }
  }
}
