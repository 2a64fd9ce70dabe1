import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import {
  Client,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type ProgressCallback,
  type Tool,
  type Transport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { AdminLogger } from '@aptix/tool-contract';
import { McpBridgeError } from './codes.js';
import { countReconnect, tracedRemoteCall, tracingFetch } from './bridge-telemetry.js';
import { resolveValues, type McpBridgeOptions } from './options.js';
import { ResourceWatches } from './resource-watches.js';
import { listTools } from './tool-listing.js';
import { RelistPacer } from './relist-pacer.js';

const CLIENT_INFO = { name: 'aptix-mcp-bridge', version: '0.1.0' };
/** Per step (connect, then list), so both fit the host's default start-up limit of a package (10 s). */
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_INITIAL_DELAY_MS = 250;
const DEFAULT_MAX_DELAY_MS = 30_000;
const MAX_STDERR_LINE = 2_000;
/** setTimeout's largest delay; a larger one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** Thrown by {@link ServerConnection.call} when there is no connection to call through. */
export class ServerUnavailableError extends Error {
  override readonly name = 'ServerUnavailableError';
}

/**
 * One MCP server, through the v2 SDK's client: connects (2026-07-28 or the 2025 handshake), lists the
 * tools, reports list changes, and when the connection drops (the process died, the HTTP server went
 * away) connects again with exponential backoff, reporting the tool list of each new connection.
 */
export class ServerConnection {
  readonly #options: McpBridgeOptions;
  readonly #logger: AdminLogger;
  readonly #onTools: (tools: readonly Tool[]) => void | Promise<void>;
  #client: Client | undefined;
  /** Bumped per connection, so a late close event of an old one is ignored. */
  #generation = 0;
  #state: 'idle' | 'connected' | 'reconnecting' | 'closed' = 'idle';
  #attempts = 0;
  #lastError = '';
  #timer: ReturnType<typeof setTimeout> | undefined;
  #pid: number | undefined;
  /** Relisting after tools/list_changed: one at a time, spaced, with later notifications folded in. */
  readonly #tools = new RelistPacer(
    () => this.#relist(),
    () => this.#state === 'connected',
  );
  /** The same after prompts/list_changed or resources/list_changed, once a host follows the units. */
  readonly #units = new RelistPacer(
    () => this.#onUnits?.() ?? Promise.resolve(),
    () => this.#state === 'connected',
  );
  #onUnits: (() => Promise<void>) | undefined;
  #listings = 0;
  /** Subscriptions to the server's resources, carried over reconnects. */
  readonly watches: ResourceWatches;

  constructor(
    options: McpBridgeOptions,
    logger: AdminLogger,
    onTools: (tools: readonly Tool[]) => void | Promise<void>,
  ) {
    this.#options = options;
    this.#logger = logger;
    this.#onTools = onTools;
    this.watches = new ResourceWatches((uri, error) =>
      logger.addCustomEvent(
        'warn',
        '[McpBridge_SubscribeFailed]',
        `MCP server "${options.name}" refused a subscription to ${uri}: ${reason(error)}.`,
        [['Server', options.name]],
      ),
    );
  }

  /** Where the server is, for messages: the command or the URL (never a header or an environment value). */
  get target(): string {
    const { stdio, http } = this.#options;
    if (stdio) return `stdio: ${[stdio.command, ...(stdio.args ?? [])].join(' ')}`;
    // The query is left out: some servers take a key there, and messages and logs must not carry it.
    const url = new URL(http!.url);
    return `Streamable HTTP: ${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
  }

  /** The process id of a stdio server while connected (for operators and tests). */
  get pid(): number | undefined {
    return this.#pid;
  }

  get connected(): boolean {
    return this.#state === 'connected';
  }

  /** How many times the tools were listed, start-up and reconnects included (for operators and tests). */
  get listings(): number {
    return this.#listings;
  }

  /** The protocol revision of the current connection (`2026-07-28`, `2025-11-25`…), when connected. */
  get protocolVersion(): string | undefined {
    return this.#state === 'connected' ? this.#client?.getNegotiatedProtocolVersion() : undefined;
  }

  /** Connects and lists the tools; throws an McpBridgeError naming the server and the reason. */
  async start(): Promise<readonly Tool[]> {
    try {
      const tools = await this.#connect();
      this.#state = 'connected';
      return tools;
    } catch (error) {
      this.#state = 'closed';
      throw new McpBridgeError(
        `MCP server "${this.#options.name}" (${this.target}) cannot be reached: ${reason(error)}. ` +
          `Fix: check that the server starts and answers there, or mark its toolPackages entry ` +
          `"optional": true to start without it.`,
        { cause: error },
      );
    }
  }

  /**
   * Calls a tool; rejects with ServerUnavailableError when not connected, and with whatever the SDK
   * throws otherwise. Not async, and given its options as arguments: it runs on every bridged call.
   */
  call(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
    onprogress?: ProgressCallback,
  ): Promise<CallToolResult> {
    const client = this.#client;
    if (this.#state !== 'connected' || client === undefined)
      return Promise.reject(new ServerUnavailableError(this.describeUnavailable()));
    // The SDK's own time-out sits just past Aptix's, so the executor's TIMEOUT is what callers see;
    // aborting the signal sends notifications/cancelled to the server.
    const timeout = Math.min(timeoutMs + 1_000, MAX_TIMER_MS);
    const options = onprogress === undefined ? { signal, timeout } : { signal, timeout, onprogress };
    // With tracing on, a client span whose context goes to the server in _meta (the MCP conventions).
    return tracedRemoteCall(this.#options.name, name, this.#options.http?.url, (meta) =>
      client.callTool(meta === undefined ? { name, arguments: args } : { name, arguments: args, _meta: meta }, options),
    );
  }

  /** The connected client, for prompts and resources (bridged-units.ts); throws ServerUnavailableError when not connected. */
  client(): Client {
    const client = this.#client;
    if (this.#state !== 'connected' || client === undefined)
      throw new ServerUnavailableError(this.describeUnavailable());
    return client;
  }

  /** Why calls cannot go through now, for failed results. */
  describeUnavailable(): string {
    if (this.#state === 'closed') return `the bridge to MCP server "${this.#options.name}" is closed`;
    const last = this.#lastError ? ` (last error: ${this.#lastError})` : '';
    return `MCP server "${this.#options.name}" is not connected; the host is reconnecting (attempt ${this.#attempts})${last}`;
  }

  /** The connection is known to be broken (a call failed at the transport): close it and reconnect. */
  lost(why: string): void {
    if (this.#state !== 'connected') return;
    this.#state = 'reconnecting';
    this.#lastError = why;
    this.#generation++;
    const old = this.#client;
    this.#client = undefined;
    this.watches.detach();
    this.#logger.addCustomEvent(
      'warn',
      '[McpBridge_ConnectionLost]',
      `MCP server "${this.#options.name}" (${this.target}): the connection was lost (${why}); its tools fail with REMOTE_UNAVAILABLE until it is back.`,
      [['Server', this.#options.name]],
    );
    void old?.close().catch(() => undefined);
    this.#schedule();
  }

  async close(): Promise<void> {
    this.#state = 'closed';
    this.#generation++;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#tools.cancel();
    this.#units.cancel();
    const client = this.#client;
    this.#client = undefined;
    this.watches.detach();
    await client?.close().catch(() => undefined);
  }

  #schedule(): void {
    const initial = this.#options.reconnect?.initialDelayMs ?? DEFAULT_INITIAL_DELAY_MS;
    const max = this.#options.reconnect?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
    const delay = Math.min(initial * 2 ** Math.min(this.#attempts, 30), max);
    this.#attempts++;
    this.#timer = setTimeout(() => void this.#reconnect(), delay);
    // A reconnect loop never keeps the host process alive on its own.
    this.#timer.unref();
  }

  async #reconnect(): Promise<void> {
    this.#timer = undefined;
    if (this.#state !== 'reconnecting') return;
    try {
      const tools = await this.#connect();
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the await before it may have changed this; narrowing does not see across an await
      if (this.#state !== 'reconnecting') return; // closed meanwhile
      this.#state = 'connected';
      countReconnect(this.#options.name);
      this.#logger.addCustomEvent(
        'info',
        '[McpBridge_Reconnected]',
        `MCP server "${this.#options.name}" is back after ${this.#attempts} attempt(s), speaking ${this.protocolVersion ?? 'an unknown revision'}.`,
        [['Server', this.#options.name]],
      );
      this.#attempts = 0;
      this.#lastError = '';
      await this.#onTools(tools);
      // The server may have changed its prompts and resources while it was away.
      if (this.#onUnits !== undefined) this.#units.soon();
    } catch (error) {
      if (this.#state !== 'reconnecting') return;
      this.#lastError = reason(error);
      this.#logger.addCustomEvent(
        'warn',
        '[McpBridge_ReconnectFailed]',
        `MCP server "${this.#options.name}" (${this.target}): reconnect attempt ${this.#attempts} failed: ${this.#lastError}.`,
        [['Server', this.#options.name]],
      );
      this.#schedule();
    }
  }

  async #connect(): Promise<readonly Tool[]> {
    const generation = ++this.#generation;
    const timeout = this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const protocol = this.#options.protocol ?? 'auto';
    const client = new Client(CLIENT_INFO, {
      // The probe gets the whole connect time-out: a modern server slow to start must not be taken for a 2025 one.
      versionNegotiation: { mode: protocol === '2026-07-28' ? { pin: protocol } : protocol },
      listChanged: {
        tools: {
          // The bridge lists by itself (see relist-pacer.ts): the SDK's own refresh debounces, so a steady
          // flood would put it off for ever, and two of its refreshes can overlap and land out of order.
          autoRefresh: false,
          debounceMs: 0,
          onChanged: () => {
            if (generation === this.#generation) this.#tools.soon();
          },
        },
        // Prompts and resources the same way, for a host that follows them (see followUnits).
        prompts: { autoRefresh: false, debounceMs: 0, onChanged: () => this.#unitsChanged(generation) },
        resources: { autoRefresh: false, debounceMs: 0, onChanged: () => this.#unitsChanged(generation) },
      },
    });
    client.onclose = () => {
      if (generation === this.#generation) this.lost('the connection closed');
    };
    client.onerror = (error) => {
      if (generation === this.#generation)
        this.#logger.addCustomEvent(
          'debug',
          '[McpBridge_TransportError]',
          `MCP server "${this.#options.name}": ${reason(error)}`,
          [['Server', this.#options.name]],
        );
    };
    const transport = this.#transport();
    try {
      await client.connect(transport, { timeout });
      this.#pid = detach(transport);
      const tools = await listTools(client, { timeout });
      this.#listings++;
      if (generation !== this.#generation) throw new Error('the bridge was closed while connecting');
      this.#client = client;
      this.watches.attach(client);
      return tools;
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  /** Lists the tools again soon, as after tools/list_changed. */
  relist(): void {
    if (this.#state === 'connected') this.#tools.soon();
  }

  /**
   * Follows the server's prompts and resources: after prompts/list_changed or resources/list_changed
   * (and after a reconnect), `relist` runs, paced as the tool listing is.
   */
  followUnits(relist: () => Promise<void>): void {
    this.#onUnits = relist;
  }

  #unitsChanged(generation: number): void {
    if (generation === this.#generation && this.#onUnits !== undefined) this.#units.soon();
  }

  async #relist(): Promise<void> {
    const client = this.#client;
    if (client === undefined) return; // a reconnect lists the tools anyway
    const generation = this.#generation;
    try {
      // `refresh`: a 2026-07-28 server's cache hint must not hide the change it just announced.
      const tools = await listTools(client, {
        timeout: this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
        cacheMode: 'refresh',
      });
      this.#listings++;
      if (generation === this.#generation) await this.#onTools(tools);
    } catch (error) {
      if (generation === this.#generation)
        this.#logger.addCustomEvent(
          'warn',
          '[McpBridge_RelistFailed]',
          `MCP server "${this.#options.name}" said its tools changed, but listing them failed: ${reason(error)}.`,
          [['Server', this.#options.name]],
        );
    }
  }

  #transport(): Transport {
    const { stdio, http, name } = this.#options;
    if (stdio) {
      const env = resolveValues(stdio.env, 'the environment variable', name);
      const transport = new StdioClientTransport({
        command: stdio.command,
        args: [...(stdio.args ?? [])],
        env,
        ...(stdio.cwd ? { cwd: stdio.cwd } : {}),
        stderr: 'pipe',
      });
      const stderr = transport.stderr as Readable | null;
      if (stderr) {
        // The server's stderr goes to the host's log, a line per event, never to the host's own stdio (which may carry MCP).
        createInterface({ input: stderr }).on('line', (line) => {
          this.#logger.addCustomEvent('debug', '[McpBridge_ServerStderr]', line.slice(0, MAX_STDERR_LINE), [
            ['Server', name],
          ]);
        });
      }
      return transport;
    }
    const headers = resolveValues(http!.headers, 'the header', name);
    return new StreamableHTTPClientTransport(new URL(http!.url), { requestInit: { headers }, fetch: tracingFetch });
  }
}

/**
 * Lets the host exit while a stdio server runs: the child and its pipes no longer keep the event loop
 * alive (the server gets end-of-file on its stdin when the host goes, and stops). The SDK keeps the
 * child in a private field; if a later SDK moves it, nothing breaks but this.
 */
function detach(transport: Transport): number | undefined {
  const child = (transport as unknown as { _process?: ChildProcess })._process;
  if (child === undefined || typeof child.unref !== 'function') return undefined;
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr])
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  return child.pid;
}

/** An error's message, without a stack, bounded. */
export function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const cut = text.split('\n    at ')[0]!.trim();
  return cut.length > 500 ? `${cut.slice(0, 499)}…` : cut || 'unknown error';
}
