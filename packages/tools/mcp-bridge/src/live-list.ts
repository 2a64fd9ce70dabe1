import type { Tool } from '@modelcontextprotocol/client';
import { canonicalJson, type AdminLogger } from '@aptix/tool-contract';
import type { BridgedToolReport } from './bridged-tool-report.js';
import type { BridgedToolClass, RemoteToolStatus } from './bridged-tool.js';
import { defaultPrefix, stableNames } from './naming.js';
import type { McpBridgeOptions } from './options.js';

const DEFAULT_MAX_TOOLS = 1_000;
/** Past this many tools in one change, the log gets one line for them rather than one each. */
const LOGGED_ONE_BY_ONE = 20;
/** Tools built between two turns of the event loop while following a long new list. */
const BUILD_SLICE = 50;
const TOO_MANY_LOG_INTERVAL_MS = 60_000;

/** One offered remote tool: its Aptix name, its class, and what it was built from. */
interface Offered {
  readonly name: string;
  readonly toolClass: BridgedToolClass;
  /** The canonical JSON of everything the class is built from (description, schema, annotations…). */
  readonly source: string;
  /** The canonical input schema alone, for the log of what changed. */
  readonly schema: string;
}

/** Everything a tool class is built from, as canonical JSON: a change to any of it makes a new class. */
function sourceOf(remote: Tool): string {
  return canonicalJson({
    description: remote.description ?? null,
    title: remote.title ?? null,
    inputSchema: remote.inputSchema,
    annotations: remote.annotations ?? null,
    execution: remote.execution ?? null,
  });
}

/**
 * The tools a bridge offers now, by remote name, and how a new tool list from the server changes
 * them when a host follows changes: new tools are built and checked as at start-up, a changed tool
 * gets a new class (its schema checked first), a removed one goes. At most `maxTools` are offered.
 */
export class LiveToolList {
  readonly offered = new Map<string, Offered>();
  /** What each refused remote tool was built from: listed again unchanged, it is not built and checked again. */
  readonly #refused = new Map<string, string>();
  readonly #options: McpBridgeOptions;
  readonly #logger: AdminLogger;
  readonly #status: Map<string, RemoteToolStatus>;
  readonly #build: (remote: Tool, name: string) => { toolClass?: BridgedToolClass; report: BridgedToolReport };
  /** When the last [McpBridge_TooManyTools] line was logged (0: the list is within the limit). */
  #tooManyLoggedAt = 0;

  constructor(
    options: McpBridgeOptions,
    logger: AdminLogger,
    status: Map<string, RemoteToolStatus>,
    build: (remote: Tool, name: string) => { toolClass?: BridgedToolClass; report: BridgedToolReport },
  ) {
    this.#options = options;
    this.#logger = logger;
    this.#status = status;
    this.#build = build;
  }

  /** Records a tool offered at start-up. */
  offer(remote: Tool, name: string, toolClass: BridgedToolClass): void {
    this.offered.set(remote.name, {
      name,
      toolClass,
      source: sourceOf(remote),
      schema: canonicalJson(remote.inputSchema),
    });
  }

  /** The first `maxTools` of a list (tools already offered first), with one logged line for the rest. */
  capped(tools: readonly Tool[]): readonly Tool[] {
    const max = this.#options.maxTools ?? DEFAULT_MAX_TOOLS;
    if (tools.length <= max) {
      this.#tooManyLoggedAt = 0;
      return tools;
    }
    const kept = [
      ...tools.filter((tool) => this.offered.has(tool.name)),
      ...tools.filter((tool) => !this.offered.has(tool.name)),
    ].slice(0, max);
    // Once when the list goes past the limit, then at most once a minute while it stays past it: a
    // server that grows its list in steps must not fill the log.
    const now = Date.now();
    if (now - this.#tooManyLoggedAt >= TOO_MANY_LOG_INTERVAL_MS) {
      this.#tooManyLoggedAt = now;
      const server = this.#options.name;
      this.#logger.addCustomEvent(
        'error',
        '[McpBridge_TooManyTools]',
        `MCP server "${server}" offers ${tools.length} tools, more than its "maxTools" (${max}); ` +
          `the other ${tools.length - max} are not offered. Fix: narrow the tools with "include" or ` +
          `"exclude", or raise "maxTools".`,
        [['Server', server]],
      );
    }
    return kept;
  }

  /**
   * A new tool list while a host follows changes: new tools are built and checked as at start-up,
   * a changed tool gets a new class (its schema checked first), a removed one goes; then the host is
   * given the new list. Names already offered never move to another remote tool.
   */
  async follow(remoteTools: readonly Tool[]): Promise<readonly BridgedToolClass[] | undefined> {
    const server = this.#options.name;
    const { include, exclude, rename } = this.#options;
    const wanted = this.capped(
      remoteTools.filter(
        (tool) => (include === undefined || include.includes(tool.name)) && !(exclude ?? []).includes(tool.name),
      ),
    );
    const kept = new Map([...this.offered].map(([remote, offered]) => [remote, offered.name]));
    const names = stableNames(
      this.#options.prefix ?? defaultPrefix(server),
      wanted.map((tool) => tool.name),
      rename,
      kept,
    );
    const next = new Map<string, Offered>();
    const added: string[] = [];
    let built = 0;
    for (const remote of wanted) {
      if (next.has(remote.name)) continue; // a server listing one name twice: the first counts
      const source = sourceOf(remote);
      const before = this.offered.get(remote.name);
      if (before !== undefined && before.source === source) {
        next.set(remote.name, before);
        continue;
      }
      if (before === undefined && this.#refused.get(remote.name) === source) continue;
      // Building checks each tool against the contract: a long new list is built in slices, so the
      // host keeps answering meanwhile.
      if (++built % BUILD_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const name = names.get(remote.name)!;
      const result = this.#build(remote, name);
      const schema = canonicalJson(remote.inputSchema);
      if (result.toolClass === undefined) {
        this.#refused.set(remote.name, source);
        const why = result.report.skipped.join('; ');
        if (before !== undefined) {
          this.#status.set(remote.name, { kind: 'rejected', why });
          this.#logger.addCustomEvent(
            'error',
            '[McpBridge_SchemaRejected]',
            `MCP server "${server}" changed "${remote.name}", and the new definition fails the contract: ${why}. ${name} is no longer offered; calls answer REMOTE_SCHEMA_REJECTED.`,
            [
              ['Server', server],
              ['Tool', remote.name],
            ],
          );
        } else if (this.#status.get(remote.name)?.kind !== 'rejected') {
          this.#status.set(remote.name, { kind: 'rejected', why });
          this.#logger.addCustomEvent(
            'warn',
            '[McpBridge_ToolSkipped]',
            `MCP server "${server}": its tool "${remote.name}" is not offered: ${why}.`,
            [
              ['Server', server],
              ['Tool', remote.name],
            ],
          );
        }
        continue;
      }
      next.set(remote.name, { name, toolClass: result.toolClass, source, schema });
      this.#refused.delete(remote.name);
      this.#status.set(remote.name, { kind: 'offered' });
      if (before === undefined) added.push(remote.name);
      else if (before.schema !== schema) {
        this.#logger.addCustomEvent(
          'warn',
          '[McpBridge_SchemaChanged]',
          `MCP server "${server}" changed the input schema of "${remote.name}": ` +
            `${describeChange(before.schema, result.toolClass.getSchema().parameters as { properties: object; required: readonly string[] })}. ` +
            `The new schema passed the contract check and is offered as ${name} from now on.`,
          [
            ['Server', server],
            ['Tool', remote.name],
          ],
        );
      } else {
        this.#logger.addCustomEvent(
          'info',
          '[McpBridge_ToolUpdated]',
          `MCP server "${server}" changed the description or annotations of "${remote.name}"; ${name} is offered with them from now on.`,
          [
            ['Server', server],
            ['Tool', remote.name],
          ],
        );
      }
    }
    const listed = new Set(remoteTools.map((tool) => tool.name));
    for (const [remoteName, status] of this.#status)
      if (status.kind === 'rejected' && !listed.has(remoteName)) this.#status.set(remoteName, { kind: 'gone' });
    for (const remoteName of [...this.#refused.keys()]) if (!listed.has(remoteName)) this.#refused.delete(remoteName);
    for (const [remoteName, offered] of this.offered) {
      if (next.has(remoteName)) continue;
      if (this.#status.get(remoteName)?.kind === 'rejected') continue; // logged as rejected above
      this.#status.set(remoteName, { kind: 'gone' });
      this.#logger.addCustomEvent(
        'warn',
        '[McpBridge_ToolGone]',
        `MCP server "${server}" no longer offers "${remoteName}"; ${offered.name} is no longer offered, and calls answer REMOTE_TOOL_GONE.`,
        [
          ['Server', server],
          ['Tool', remoteName],
        ],
      );
    }
    for (const remote of added.slice(0, LOGGED_ONE_BY_ONE)) {
      this.#logger.addCustomEvent(
        'info',
        '[McpBridge_ToolAdded]',
        `MCP server "${server}" now offers "${remote}", checked against the contract and offered as ${next.get(remote)!.name}.`,
        [
          ['Server', server],
          ['Tool', remote],
        ],
      );
    }
    if (added.length > LOGGED_ONE_BY_ONE) {
      this.#logger.addCustomEvent(
        'info',
        '[McpBridge_ToolAdded]',
        `MCP server "${server}" now offers ${added.length - LOGGED_ONE_BY_ONE} more new tools, checked against the contract and offered.`,
        [['Server', server]],
      );
    }
    const same =
      next.size === this.offered.size && [...next].every(([remote, offered]) => this.offered.get(remote) === offered);
    if (same) return undefined;
    this.offered.clear();
    for (const [remote, offered] of next) this.offered.set(remote, offered);
    return Object.freeze([...next.values()].map((offered) => offered.toolClass));
  }
}

/** Added and removed arguments, and changes to `required`, for the log. */
export function describeChange(
  before: string,
  after: { readonly properties: object; readonly required: readonly string[] },
): string {
  const old = JSON.parse(before) as { properties?: object; required?: string[] };
  const oldNames = Object.keys(old.properties ?? {});
  const newNames = Object.keys(after.properties);
  const parts: string[] = [];
  const added = newNames.filter((name) => !oldNames.includes(name));
  const removed = oldNames.filter((name) => !newNames.includes(name));
  const nowRequired = after.required.filter((name) => !(old.required ?? []).includes(name));
  if (added.length > 0) parts.push(`arguments added: ${added.join(', ')}`);
  if (removed.length > 0) parts.push(`arguments removed: ${removed.join(', ')}`);
  if (nowRequired.length > 0) parts.push(`now required: ${nowRequired.join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : 'the argument types or constraints changed';
}
