import type { RegisteredResource } from '@aptix/tool-contract';

/**
 * Subscriptions to resources, counted per URI: the resource's `subscribe` hook runs when the first
 * subscriber comes and its stop function when the last leaves (or the host stops). A hook that throws
 * or returns garbage fails that subscription only. Every change is told to the host's listeners (the
 * MCP surfaces), which send `notifications/resources/updated` to their subscribers: once per URI and
 * turn of the event loop, however often the package calls `changed()` in it.
 */
export class UnitWatches {
  readonly #watched = new Map<string, { count: number; stop: (() => void) | undefined }>();
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
      let stop: unknown;
      try {
        stop = resource.resource.subscribe!(uri, () => this.#changed(uri));
      } catch (error) {
        return {
          error: `Resource "${resource.name}" could not start watching ${uri}: ${error instanceof Error ? error.message : String(error)}.`,
        };
      }
      entry = { count: 0, stop: typeof stop === 'function' ? (stop as () => void) : undefined };
      this.#watched.set(uri, entry);
    }
    entry.count++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const current = this.#watched.get(uri);
        if (current === undefined || --current.count > 0) return;
        this.#watched.delete(uri);
        try {
          current.stop?.();
        } catch {
          // A hook that fails to stop cannot be helped; the host stops listening anyway.
        }
      },
    };
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
      try {
        entry.stop?.();
      } catch {
        // see release
      }
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
