/** The longest delay a Node.js timer takes (2^31 - 1 ms); a longer time-out is cut to it. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A call waiting for its deadline, linked into the queue of its time-out length. */
export interface Deadline {
  readonly at: number;
  expire(): void;
  prev: Deadline | undefined;
  next: Deadline | undefined;
  queue: DeadlineList | undefined;
}

export interface DeadlineList {
  head: Deadline | undefined;
  tail: Deadline | undefined;
}

/**
 * The deadlines of every call in flight, behind one timer. A timer per call (or an
 * `AbortSignal.timeout`) costs more than a small tool's whole call; here a call links itself into the
 * queue of its time-out length and unlinks itself when it settles, both O(1). Calls with the same
 * time-out expire in the order they started, so each queue is sorted by construction and only the
 * heads are compared. The timer holds the process open only while a call is in flight, as a timer
 * per call would.
 */
class DeadlineQueue {
  readonly #queues = new Map<number, DeadlineList>();
  #pending = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;

  add(entry: Deadline, timeoutMs: number): void {
    let list = this.#queues.get(timeoutMs);
    if (list === undefined) {
      list = { head: undefined, tail: undefined };
      this.#queues.set(timeoutMs, list);
    }
    entry.queue = list;
    entry.prev = list.tail;
    if (list.tail === undefined) list.head = entry;
    else list.tail.next = entry;
    list.tail = entry;
    if (this.#pending++ === 0) this.#timer?.ref();
    if (entry.at < this.#timerAt) this.#arm(entry.at);
  }

  /** Unlinks a call that settled; false when it was no longer queued (its deadline already fired). */
  remove(entry: Deadline): boolean {
    const list = entry.queue;
    if (list === undefined) return false;
    if (entry.prev === undefined) list.head = entry.next;
    else entry.prev.next = entry.next;
    if (entry.next === undefined) list.tail = entry.prev;
    else entry.next.prev = entry.prev;
    entry.queue = entry.prev = entry.next = undefined;
    // Idle: the armed timer stays, but no longer keeps the process alive.
    if (--this.#pending === 0) this.#timer?.unref();
    return true;
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(
      () => this.#fire(),
      Math.min(Math.max(1, Math.ceil(at - performance.now())), MAX_TIMER_MS),
    );
    if (this.#pending === 0) this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = performance.now();
    const due: Deadline[] = [];
    let next = Infinity;
    for (const [length, list] of this.#queues) {
      while (list.head !== undefined && list.head.at <= now) {
        const entry = list.head;
        this.remove(entry);
        due.push(entry);
      }
      if (list.head === undefined) this.#queues.delete(length);
      else if (list.head.at < next) next = list.head.at;
    }
    if (next !== Infinity) this.#arm(next);
    for (const entry of due) entry.expire();
  }
}

/** The one queue of every executor in the process. */
export const deadlines = new DeadlineQueue();
