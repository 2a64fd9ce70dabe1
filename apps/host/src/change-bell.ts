/** The least time between two tellings: a package that reports new lists without pause is heard ten times a second. */
export const MIN_GAP_MS = 100;

/**
 * Tells listeners (MCP sessions, `subscriptions/listen` streams) that lists changed while the host runs,
 * at most once per turn of the event loop and once per {@link MIN_GAP_MS}, with every kind that changed
 * meanwhile. A package reporting new lists in a tight loop, thousands in one turn or one in every turn,
 * would otherwise send each client a list_changed per report, and each client would list again. The
 * lists and their revisions change at once; only the telling waits.
 */
export class ChangeBell<Kind extends string> {
  readonly #listeners = new Set<(kinds: readonly Kind[]) => void>();
  readonly #rung = new Set<Kind>();
  #scheduled = false;
  #lastTold = -Infinity;

  /** `failed` hears a listener's exception; the other listeners are told all the same. */
  constructor(private readonly failed: (error: unknown) => void) {}

  /** Calls `listener` with the kinds that changed; returns the function that stops it. */
  listen(listener: (kinds: readonly Kind[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  ring(kinds: Iterable<Kind>): void {
    for (const kind of kinds) this.#rung.add(kind);
    if (this.#scheduled || this.#rung.size === 0) return;
    this.#scheduled = true;
    const wait = this.#lastTold + MIN_GAP_MS - Date.now();
    if (wait > 0) setTimeout(this.#tell, wait).unref();
    else setImmediate(this.#tell).unref();
  }

  readonly #tell = (): void => {
    this.#scheduled = false;
    this.#lastTold = Date.now();
    const kinds = [...this.#rung];
    this.#rung.clear();
    for (const listener of this.#listeners) {
      try {
        listener(kinds);
      } catch (error) {
        this.failed(error);
      }
    }
  };
}
