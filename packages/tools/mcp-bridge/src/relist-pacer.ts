/**
 * The least time between two listings after a `list_changed` notification. Notifications that arrive
 * meanwhile are folded into the next listing, so a server that floods them costs a few listings a
 * second, never one each, and a steady stream of them cannot put the listing off for ever (as a
 * debounce would).
 */
export const RELIST_SPACING_MS = 250;

/**
 * Lists again after a server said a list changed: at most one listing at a time, at least
 * {@link RELIST_SPACING_MS} apart, with the notifications that arrive meanwhile folded into the next.
 * One per list the bridge follows (tools; prompts and resources).
 */
export class RelistPacer {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running = false;
  #wanted = false;

  /** `active`: whether a listing can run now (connected); a reconnect lists anyway. */
  constructor(
    private readonly run: () => Promise<void>,
    private readonly active: () => boolean,
  ) {}

  /** Lists again soon. */
  soon(): void {
    this.#wanted = true;
    if (this.#running || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => void this.#fire(), RELIST_SPACING_MS);
    this.#timer.unref();
  }

  cancel(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#wanted = false;
  }

  async #fire(): Promise<void> {
    this.#timer = undefined;
    if (!this.active()) return;
    this.#wanted = false;
    this.#running = true;
    try {
      await this.run();
    } finally {
      this.#running = false;
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a notification during the await set it; narrowing does not see across an await
      if (this.#wanted && this.active()) this.soon();
    }
  }
}
