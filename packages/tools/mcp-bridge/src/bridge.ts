import type { Tool } from '@modelcontextprotocol/client';
import {
  canonicalJson,
  inspectToolClass,
  silentAdminLogger,
  type AdminLogger,
  type PackageUnits,
  type ToolAnnotations,
} from '@aptix/tool-contract';
import { bridgedUnits } from './bridged-units.js';
import { bridgedToolClass, type BridgedToolClass, type BridgeRuntime, type RemoteToolStatus } from './bridged-tool.js';
import { McpBridgeError } from './codes.js';
import { reason, ServerConnection } from './connection.js';
import { LiveUnitList } from './live-units.js';
import { convertInputSchema } from './convert-schema.js';
import { describeChange, LiveToolList } from './live-list.js';
import { aptixNames, defaultPrefix } from './naming.js';
import type { McpBridgeOptions } from './options.js';
import { limitRepeats, type RepeatLimitedLogger } from './repeat-limiter.js';
import { invalidDefinition } from './tool-listing.js';
import { boundedText, generatedUsage } from './usage-text.js';
import type { BridgedToolReport } from './bridged-tool-report.js';

// In a module of its own, so that live-list.ts is not imported back.
export type { BridgedToolReport } from './bridged-tool-report.js';

/** Calls run through the executor's deadline; the SDK's own time-out only backs it up. */
const NO_TIMEOUT_MS = 24 * 60 * 60 * 1000;
const ANNOTATION_KEYS = ['readOnlyHint', 'idempotentHint', 'destructiveHint', 'openWorldHint'] as const;
/** What a bridge needs besides its options. */
export interface McpBridgeDependencies {
  readonly logger?: AdminLogger;
  /**
   * Called with the whole new list of tool classes when the server's tool list changed after start-up
   * and the offered set changed with it: a tool added (and passing the contract), removed, or given a
   * new schema (a new class under the same name). Without it, the classes stay those of start-up.
   */
  readonly onToolsChanged?: (tools: readonly BridgedToolClass[]) => void;
}

/**
 * One MCP server's tools as Aptix tool classes. `McpBridge.start` connects, lists the tools and wraps
 * each; `tools` is what a host registers. While the host runs, the bridge follows the server: a
 * re-listed tool whose schema changed is logged and checked before calls use it, a removed tool
 * answers REMOTE_TOOL_GONE, and a dead server is reconnected with backoff.
 *
 * @example
 * const bridge = await McpBridge.start(parseBridgeOptions({ name: 'everything', stdio: { command: 'npx', args: ['mcp-server-everything'] } }), { logger });
 * registry.registerTools(bridge.tools);
 */
export class McpBridge {
  readonly #options: McpBridgeOptions;
  /** Start-up's lines, each said once. */
  readonly #logger: AdminLogger;
  /** Everything after: what a server that keeps changing makes the bridge say again and again is bounded. */
  readonly #later: RepeatLimitedLogger;
  readonly #connection: ServerConnection;
  readonly #status = new Map<string, RemoteToolStatus>();
  /** The canonical input schema each offered tool had at start-up, and the last one seen. */
  readonly #offeredSchemas = new Map<string, string>();
  readonly #seenSchemas = new Map<string, string>();
  readonly #announced = new Set<string>();
  readonly #reports: BridgedToolReport[] = [];
  #tools: readonly BridgedToolClass[] = [];
  #started = false;
  /** A later list arrived before start-up finished (it may be newer than the one wrapped): list again. */
  #missed = false;
  readonly #onToolsChanged: ((tools: readonly BridgedToolClass[]) => void) | undefined;
  /** What is offered now, by remote name, and how a new list changes it (when a host follows changes). */
  readonly #live: LiveToolList;
  /** The prompts and resources offered now, when a host follows them. */
  readonly #liveUnits = new LiveUnitList();
  #unitListings = 0;

  private constructor(
    options: McpBridgeOptions,
    logger: AdminLogger,
    onToolsChanged: McpBridgeDependencies['onToolsChanged'],
  ) {
    this.#options = options;
    this.#logger = logger;
    this.#later = limitRepeats(logger, options.name);
    this.#onToolsChanged = onToolsChanged;
    this.#connection = new ServerConnection(options, this.#later, (tools) =>
      this.#onToolsChanged === undefined ? this.#relisted(tools) : this.#follow(tools),
    );
    this.#live = new LiveToolList(options, this.#later, this.#status, (remote, name) =>
      this.#build(remote, name, this.#runtime()),
    );
  }

  /** Connects to the server and wraps its tools; throws an McpBridgeError naming the server when it cannot. */
  static async start(options: McpBridgeOptions, dependencies: McpBridgeDependencies = {}): Promise<McpBridge> {
    const bridge = new McpBridge(options, dependencies.logger ?? silentAdminLogger, dependencies.onToolsChanged);
    const tools = await bridge.#connection.start();
    try {
      bridge.#wrap(tools);
    } catch (error) {
      await bridge.close();
      throw error;
    }
    bridge.#started = true;
    if (bridge.#missed) bridge.#connection.relist();
    return bridge;
  }

  /** How many times the server's tools were listed (start-up, reconnects, and after list changes). */
  get listings(): number {
    return this.#connection.listings;
  }

  /** The tool classes to register: those of start-up, or, when the bridge reports changes, those offered now. */
  get tools(): readonly BridgedToolClass[] {
    return this.#tools;
  }

  get serverName(): string {
    return this.#options.name;
  }

  get connected(): boolean {
    return this.#connection.connected;
  }

  /** The process id of a stdio server, while connected. */
  get pid(): number | undefined {
    return this.#connection.connected ? this.#connection.pid : undefined;
  }

  /** The protocol revision spoken with the server now, when connected. */
  get protocolVersion(): string | undefined {
    return this.#connection.protocolVersion;
  }

  /** What became of every remote tool at start-up: offered or skipped, strict or not, and why. */
  report(): readonly BridgedToolReport[] {
    return this.#reports;
  }

  /** The current standing of a bridged tool, by its remote name. */
  status(remoteName: string): RemoteToolStatus {
    return this.#status.get(remoteName) ?? { kind: 'gone' };
  }

  /** The server's prompts and resources as Aptix units, listed now (see bridged-units.ts). */
  async units(): Promise<PackageUnits> {
    const units = await bridgedUnits(
      () => this.#connection.client(),
      this.#options,
      this.#logger,
      this.#connection.watches,
    );
    this.#liveUnits.offer(units);
    return units;
  }

  /** How many times the server's prompts and resources were listed again after start-up (for operators and tests). */
  get unitListings(): number {
    return this.#unitListings;
  }

  /**
   * Follows the server's prompts and resources for a host that takes them (`ToolPackageHost.unitsChanged`):
   * after prompts/list_changed or resources/list_changed (and a reconnect) they are listed again, paced
   * as the tools are, and `report` gets the whole new lists when what is offered changed.
   */
  followUnits(report: (units: PackageUnits) => void): void {
    this.#connection.followUnits(async () => {
      const server = this.#options.name;
      let units: PackageUnits;
      try {
        units = await bridgedUnits(
          () => this.#connection.client(),
          this.#options,
          this.#later,
          this.#connection.watches,
        );
      } catch (error) {
        this.#later.addCustomEvent(
          'warn',
          '[McpBridge_UnitRelistFailed]',
          `MCP server "${server}" said its prompts or resources changed, but listing them failed: ${reason(error)}. They stay as they were.`,
          [['Server', server]],
        );
        return;
      } finally {
        this.#unitListings++;
      }
      const changed = this.#liveUnits.follow(units);
      if (changed === undefined) return;
      this.#later.addCustomEvent(
        'info',
        '[McpBridge_UnitsChanged]',
        `MCP server "${server}" changed its prompts or resources: ${changed.prompts.length} prompts and ${changed.resources.length} resources are offered now.`,
        [['Server', server]],
      );
      try {
        report(changed);
      } catch (error) {
        this.#later.addException('[McpBridge_UnitsChangedHandler__Exception]', error, [['Server', server]]);
      }
    });
  }

  /** Closes the connection (a stdio server is stopped); the tools then answer REMOTE_UNAVAILABLE. */
  close(): Promise<void> {
    this.#later.flush();
    return this.#connection.close();
  }

  #wrap(remoteTools: readonly Tool[]): void {
    const { name: server, include, exclude, rename, invalidTools } = this.#options;
    const prefix = this.#options.prefix ?? defaultPrefix(server);
    const wanted = this.#live.capped(
      remoteTools.filter(
        (tool) => (include === undefined || include.includes(tool.name)) && !(exclude ?? []).includes(tool.name),
      ),
    );
    for (const missing of (include ?? []).filter((remote) => !remoteTools.some((tool) => tool.name === remote))) {
      this.#logger.addCustomEvent(
        'warn',
        '[McpBridge_IncludeMissing]',
        `MCP server "${server}" offers no tool "${missing}", which its options include.`,
        [['Server', server]],
      );
    }
    const names = aptixNames(
      prefix,
      wanted.map((tool) => tool.name),
      rename,
    );
    const byName = new Map<string, string>();
    const runtime: BridgeRuntime = {
      connection: this.#connection,
      status: (remote) => this.status(remote),
      defaultTimeoutMs: NO_TIMEOUT_MS,
    };
    const classes: BridgedToolClass[] = [];
    for (const remote of wanted) {
      const name = names.get(remote.name)!;
      const other = byName.get(name);
      if (other !== undefined) {
        throw new McpBridgeError(
          `MCP server "${server}": the tools "${other}" and "${remote.name}" would both be called "${name}". Fix: give one of them another name in the options' "rename".`,
        );
      }
      byName.set(name, remote.name);
      const built = this.#build(remote, name, runtime);
      this.#reports.push(built.report);
      if (built.toolClass === undefined) {
        const why = built.report.skipped.join('; ');
        if (invalidTools === 'fail')
          throw new McpBridgeError(
            `MCP server "${server}": its tool "${remote.name}" cannot be offered: ${why}. Fix: exclude it in the options, or set "invalidTools": "skip".`,
          );
        this.#logger.addCustomEvent(
          'warn',
          '[McpBridge_ToolSkipped]',
          `MCP server "${server}": its tool "${remote.name}" is not offered: ${why}.`,
          [
            ['Server', server],
            ['Tool', remote.name],
          ],
        );
        continue;
      }
      classes.push(built.toolClass);
      this.#status.set(remote.name, { kind: 'offered' });
      const schema = canonicalJson(remote.inputSchema);
      this.#offeredSchemas.set(remote.name, schema);
      this.#seenSchemas.set(remote.name, schema);
      this.#live.offer(remote, name, built.toolClass);
      const strictNote = built.report.strict ? 'strict' : `strict: false (${built.report.strictProblems.join('; ')})`;
      this.#logger.addCustomEvent(
        'info',
        '[McpBridge_ToolBridged]',
        `MCP server "${server}": "${remote.name}" is offered as ${name}, ${strictNote}${built.report.notes.length > 0 ? `; schema adjusted: ${built.report.notes.join('; ')}` : ''}.`,
        [
          ['Server', server],
          ['Tool', name],
        ],
      );
    }
    for (const remote of remoteTools) this.#announced.add(remote.name);
    this.#tools = Object.freeze(classes);
  }

  /** Wraps one remote tool, and checks the class against the contract as the host's registry will. */
  #build(
    remote: Tool,
    name: string,
    runtime: BridgeRuntime,
  ): { toolClass?: BridgedToolClass; report: BridgedToolReport } {
    const skip = (why: readonly string[], notes: readonly string[] = []) => ({
      report: {
        remoteName: remote.name,
        name: undefined,
        offered: false,
        strict: false,
        strictProblems: [],
        notes,
        skipped: why,
      },
    });
    const invalid = invalidDefinition(remote);
    if (invalid !== undefined) return skip([invalid]);
    if (remote.execution?.taskSupport === 'required')
      return skip(['it runs only as an MCP task (execution.taskSupport "required"), which the bridge does not run']);
    const converted = convertInputSchema(remote.inputSchema);
    if (converted.parameters === undefined)
      return skip(
        converted.problems.map((problem) => `its input schema cannot be converted: ${problem}`),
        converted.notes,
      );
    const description = boundedText(
      remote.description?.trim() ||
        remote.title?.trim() ||
        `Calls the tool "${remote.name}" of the MCP server "${this.#options.name}".`,
    );
    const annotations = pickAnnotations(remote.annotations);
    const toolClass = bridgedToolClass(
      {
        name,
        remoteName: remote.name,
        server: this.#options.name,
        schema: { type: 'function', name, description, parameters: converted.parameters, strict: converted.strict },
        usage: generatedUsage({
          name,
          remoteName: remote.name,
          server: this.#options.name,
          description,
          parameters: converted.parameters,
          annotations,
        }),
        timeoutMs: this.#options.timeoutMs,
        annotations,
        modes: this.#options.modes === undefined ? undefined : Object.freeze([...this.#options.modes]),
        approval: needsApproval(this.#options.approval, remote.name, remote.annotations),
      },
      runtime,
    );
    const { violations } = inspectToolClass(toolClass);
    if (violations.length > 0)
      return skip(
        violations.map((violation) => violation.message),
        converted.notes,
      );
    return {
      toolClass,
      report: {
        remoteName: remote.name,
        name,
        offered: true,
        strict: converted.strict,
        strictProblems: converted.strictProblems,
        notes: converted.notes,
        skipped: [],
      },
    };
  }

  /** A new tool list (tools/list_changed, or a reconnect): follow it for the tools offered at start-up. */
  #relisted(remoteTools: readonly Tool[]): void {
    if (!this.#started) {
      this.#missed = true; // the start-up listing itself is handled by #wrap
      return;
    }
    const server = this.#options.name;
    const byName = new Map(remoteTools.map((tool) => [tool.name, tool]));
    for (const [remoteName, offered] of this.#offeredSchemas) {
      const remote = byName.get(remoteName);
      const previous = this.#status.get(remoteName);
      if (remote === undefined) {
        if (previous?.kind !== 'gone')
          this.#later.addCustomEvent(
            'warn',
            '[McpBridge_ToolGone]',
            `MCP server "${server}" no longer offers "${remoteName}"; it answers REMOTE_TOOL_GONE.`,
            [
              ['Server', server],
              ['Tool', remoteName],
            ],
          );
        this.#status.set(remoteName, { kind: 'gone' });
        this.#seenSchemas.delete(remoteName);
        continue;
      }
      const schema = canonicalJson(remote.inputSchema);
      if (schema === this.#seenSchemas.get(remoteName) && previous?.kind !== 'gone') continue;
      this.#seenSchemas.set(remoteName, schema);
      if (schema === offered) {
        this.#status.set(remoteName, { kind: 'offered' });
        if (previous?.kind !== 'offered')
          this.#later.addCustomEvent(
            'info',
            '[McpBridge_ToolRestored]',
            `MCP server "${server}" offers "${remoteName}" again with the schema it had at start-up.`,
            [
              ['Server', server],
              ['Tool', remoteName],
            ],
          );
        continue;
      }
      this.#status.set(remoteName, this.#check(remote));
    }
    for (const remote of remoteTools) {
      if (this.#announced.has(remote.name)) continue;
      this.#announced.add(remote.name);
      this.#later.addCustomEvent(
        'info',
        '[McpBridge_ToolAdded]',
        `MCP server "${server}" now offers "${remote.name}"; the host offers it after a restart (bridged tools are registered at start-up).`,
        [
          ['Server', server],
          ['Tool', remote.name],
        ],
      );
    }
  }

  #runtime(): BridgeRuntime {
    return { connection: this.#connection, status: (remote) => this.status(remote), defaultTimeoutMs: NO_TIMEOUT_MS };
  }

  /** A new list while a host follows changes: the offered set follows it, and the host gets the new classes. */
  async #follow(remoteTools: readonly Tool[]): Promise<void> {
    if (!this.#started) {
      this.#missed = true;
      return;
    }
    for (const remote of remoteTools) this.#announced.add(remote.name);
    const tools = await this.#live.follow(remoteTools);
    if (tools === undefined) return;
    this.#tools = tools;
    try {
      this.#onToolsChanged!(tools);
    } catch (error) {
      this.#later.addException('[McpBridge_ToolsChangedHandler__Exception]', error, [['Server', this.#options.name]]);
    }
  }

  /** A changed schema, logged and checked before calls use it. */
  #check(remote: Tool): RemoteToolStatus {
    const server = this.#options.name;
    const converted = convertInputSchema(remote.inputSchema);
    const invalid = invalidDefinition(remote);
    let problems = invalid === undefined ? [...converted.problems] : [invalid];
    if (converted.parameters !== undefined && invalid === undefined) {
      const probe = bridgedToolClass(
        {
          name: 'bridge_schema_check',
          remoteName: remote.name,
          server,
          schema: {
            type: 'function',
            name: 'bridge_schema_check',
            description: 'check',
            parameters: converted.parameters,
            strict: converted.strict,
          },
          usage: 'check',
          timeoutMs: undefined,
          annotations: undefined,
          modes: undefined,
        },
        { connection: this.#connection, status: () => ({ kind: 'gone' }), defaultTimeoutMs: NO_TIMEOUT_MS },
      );
      problems = inspectToolClass(probe).violations.map((violation) => violation.message);
    }
    if (problems.length > 0 || converted.parameters === undefined) {
      const why = problems.join('; ');
      this.#later.addCustomEvent(
        'error',
        '[McpBridge_SchemaRejected]',
        `MCP server "${server}" changed the input schema of "${remote.name}", and the new one fails the contract: ${why}. Calls answer REMOTE_SCHEMA_REJECTED.`,
        [
          ['Server', server],
          ['Tool', remote.name],
        ],
      );
      return { kind: 'rejected', why };
    }
    this.#later.addCustomEvent(
      'warn',
      '[McpBridge_SchemaChanged]',
      `MCP server "${server}" changed the input schema of "${remote.name}": ` +
        `${describeChange(this.#offeredSchemas.get(remote.name)!, converted.parameters)}. The new ` +
        `schema passed the contract check; calls are checked against it from now on, and models see ` +
        `it after the host restarts.`,
      [
        ['Server', server],
        ['Tool', remote.name],
      ],
    );
    return { kind: 'changed', parameters: converted.parameters };
  }
}

/**
 * Whether the options put a remote tool behind an approval gate. "destructive" reads the server's
 * annotations as MCP defines them: a tool is destructive unless it says it is read-only, or says
 * `destructiveHint: false`; annotations are the server's claims, so an untrusted server's "read-only"
 * is only its word (name such tools, or use "all").
 */
export function needsApproval(
  policy: McpBridgeOptions['approval'],
  remoteName: string,
  annotations: Tool['annotations'],
): boolean {
  if (policy === undefined || policy === 'none') return false;
  if (policy === 'all') return true;
  if (policy === 'destructive') return annotations?.readOnlyHint !== true && annotations?.destructiveHint !== false;
  return policy.includes(remoteName);
}

function pickAnnotations(annotations: Tool['annotations']): ToolAnnotations | undefined {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (annotations === undefined || annotations === null) return undefined;
  const picked: Record<string, boolean> = {};
  for (const key of ANNOTATION_KEYS) if (typeof annotations[key] === 'boolean') picked[key] = annotations[key];
  return Object.keys(picked).length > 0 ? (picked as ToolAnnotations) : undefined;
}
