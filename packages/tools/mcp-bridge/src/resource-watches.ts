import type { Client } from '@modelcontextprotocol/client';

/**
 * Subscriptions to a bridged server's resources (2025 revisions: `resources/subscribe` and
 * `notifications/resources/updated`). Counted per URI: the server is asked to subscribe when the first
 * watcher of a URI comes and to unsubscribe when the last leaves; each update it sends reaches every
 * watcher of its URI. A new connection (a reconnect) hears its own updates and is subscribed again to
 * every URI still watched, so a watch outlives a server restart.
 */
export class ResourceWatches {
  readonly #byUri = new Map<string, Set<() => void>>();
  #client: Client | undefined;

  /** `failed` hears a subscribe the server refused (logged: the watch stays, and a reconnect tries again). */
  constructor(private readonly failed: (uri: string, error: unknown) => void) {}

  /** The connection to watch through from now on. */
  attach(client: Client): void {
    this.#client = client;
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      if (this.#client !== client) return;
      for (const changed of [...(this.#byUri.get(notification.params.uri) ?? [])]) {
        try {
          changed();
        } catch {
          // One watcher's failure does not keep the others from hearing.
        }
      }
    });
    for (const uri of this.#byUri.keys()) this.#subscribe(client, uri);
  }

  /** The connection is gone: nothing is asked of it any more. */
  detach(): void {
    this.#client = undefined;
  }

  /** Watches `uri`; returns what stops this watch. */
  watch(uri: string, changed: () => void): () => void {
    let watchers = this.#byUri.get(uri);
    if (watchers === undefined) {
      this.#byUri.set(uri, (watchers = new Set()));
      if (this.#client !== undefined) this.#subscribe(this.#client, uri);
    }
    // A wrapper of its own, so that the same function watching twice is two watches.
    const entry = () => changed();
    watchers.add(entry);
    return () => {
      if (!watchers.delete(entry) || watchers.size > 0 || this.#byUri.get(uri) !== watchers) return;
      this.#byUri.delete(uri);
      void this.#client?.unsubscribeResource({ uri }).catch(() => undefined);
    };
  }

  #subscribe(client: Client, uri: string): void {
    client.subscribeResource({ uri }).catch((error: unknown) => {
      if (this.#client === client) this.failed(uri, error);
    });
  }
}
