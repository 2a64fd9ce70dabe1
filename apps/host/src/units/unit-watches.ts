import type { RegisteredResource } from '@aptix/tool-contract';

/**
 * Subscriptions to resources, counted per URI: the resource's `subscribe` hook runs when the first
 * subscriber comes and its stop function when the last leaves (or the host stops). A hook that throws
 * or returns garbage fails that subscription only. Every change is told to the host's listeners (the
 * MCP surfaces), which send `notifications/resources/updated` to their subscribers: once per URI and
 * turn of the event loop, however often the package calls `changed()` in it.
 */
export class UnitWatches {
  readonly #watched = new Map<string, Watch>();
  readonly #listeners = new Set<(uri: string) => void>();
  /** URIs whose change is told on the next turn of the event loop: a package calling changed() in a loop sends one notification, not thousands. */
  readonly #pending = new Set<string>();

  constructor(private readonly resolve: (uri: string) => RegisteredResource | undefined) {}

  /** Starts watching `uri` for one subscriber; returns what ends it, or an error message. */
  watch(uri: string): { release: () => void } | { error: string } {
    const resource = this.resolve(uri);
    if (resource === undefined || !resource.subscribable)
      return {
        error:
          `Resource ${JSON.stringify(uri.slice(0, 200))} cannot be subscribed to: ` +
          `${resource === undefined ? 'no resource is at that URI' : `resource "${resource.name}" declares no subscribe hook`}.`,
      };
    let entry = this.#watched.get(uri);
    if (entry === undefined) {
      const started = this.#start(resource, uri);
      if ('error' in started) return started;
      entry = { count: 0, stop: started.stop, source: resource.resource };
      this.#watched.set(uri, entry);
    }
    entry.count++;
    const watch = entry;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        // A watch that ended (its resource was withdrawn) is not the one a later subscriber started.
        if (this.#watched.get(uri) !== watch || --watch.count > 0) return;
        this.#watched.delete(uri);
        stopQuietly(watch.stop);
      },
    };
  }

  /** Whether `uri` is watched now (a watch ends when its resource is withdrawn). */
  watching(uri: string): boolean {
    return this.#watched.has(uri);
  }

  /**
   * The resources changed while the host runs (a package's `unitsChanged`): a watched URI now served
   * by another definition moves to that definition's `subscribe` (started before the old one stops, so
   * a package counting its watchers sees no gap). A URI no longer served, or served by a resource that
   * cannot be subscribed to, ends its watch: its subscribers hear one last update, and a read then
   * says the resource was withdrawn. A client that wants it again subscribes again.
   */
  refresh(): void {
    for (const [uri, entry] of [...this.#watched]) {
      const now = this.resolve(uri);
      if (now !== undefined && now.resource === entry.source) continue;
      const started = now !== undefined && now.subscribable ? this.#start(now, uri) : undefined;
      stopQuietly(entry.stop);
      if (started !== undefined && 'stop' in started) {
        entry.stop = started.stop;
        entry.source = now!.resource;
        continue;
      }
      this.#watched.delete(uri);
      this.#tell(uri);
    }
  }

  /** Calls `listener` with each URI that changed; returns what stops it. */
  onUpdated(listener: (uri: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Ends every watch (the host stops). */
  close(): void {
    for (const [uri, entry] of this.#watched) {
      this.#watched.delete(uri);
      stopQuietly(entry.stop);
    }
  }

  /** Runs the resource's subscribe hook for `uri`: what stops it, or why it could not start. */
  #start(resource: RegisteredResource, uri: string): { stop: (() => void) | undefined } | { error: string } {
    try {
      const stop: unknown = resource.resource.subscribe!(uri, () => this.#changed(uri));
      return { stop: typeof stop === 'function' ? (stop as () => void) : undefined };
    } catch (error) {
      return {
        error: `Resource "${resource.name}" could not start watching ${uri}: ${error instanceof Error ? error.message : String(error)}.`,
      };
    }
  }

  #changed(uri: string): void {
    if (!this.#watched.has(uri) || this.#pending.has(uri)) return;
    this.#pending.add(uri);
    setImmediate(() => {
      this.#pending.delete(uri);
      if (this.#watched.has(uri)) this.#tell(uri);
    });
  }

  #tell(uri: string): void {
    for (const listener of this.#listeners) {
      try {
        listener(uri);
      } catch {
        // One surface's failure does not keep the others from hearing.
      }
    }
  }
}

interface Watch {
  count: number;
  stop: (() => void) | undefined;
  /** The definition whose `subscribe` runs for it. */
  source: RegisteredResource['resource'];
}

function stopQuietly(stop: (() => void) | undefined): void {
  try {
    stop?.();
  } catch {
    // A hook that fails to stop cannot be helped; the host stops listening anyway.
  }
}
