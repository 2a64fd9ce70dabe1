import type { ModeChange } from '../types.js';

/** What a store knew of one session's history when it started a read. */
export interface HistoryBase {
  /** The highest history `seq` already held: the read asks only for rows after it. */
  readonly lastSeq: number;
  /** The rows held, oldest first. Only ever appended to, so its first `length` rows stay as they were. */
  readonly rows: readonly ModeChange[];
  readonly length: number;
}

interface Entry {
  lastSeq: number;
  rows: ModeChange[];
}

const EMPTY: HistoryBase = Object.freeze({ lastSeq: 0, rows: Object.freeze([]) as readonly ModeChange[], length: 0 });

/**
 * The mode histories a store has read, so a read or a mode change fetches only the rows committed
 * since, not the whole history again: without it a change costs O(history), and so does every tool
 * call made in a session.
 *
 * Nothing here is trusted as current: every read still asks the database for the rows after the last
 * one held, so changes made by other hosts or processes are always seen. That is sound because history
 * rows are never updated or deleted, and the rows of one session are numbered in commit order: a store
 * takes the session's write lock before it inserts a row (SQLite's one writer, PostgreSQL's row lock),
 * and `seq` only grows. Rows are frozen, since every snapshot handed out shares them.
 *
 * Bounded: the sessions least recently used are forgotten once more than `maxRows` rows are held.
 */
export class HistoryCache {
  readonly #entries = new Map<string, Entry>();
  #rows = 0;

  constructor(private readonly maxRows = 100_000) {}

  /** What is held for a session; pass it back to {@link extend} with the rows read after `lastSeq`. */
  base(sessionId: string): HistoryBase {
    const entry = this.#entries.get(sessionId);
    return entry === undefined ? EMPTY : { lastSeq: entry.lastSeq, rows: entry.rows, length: entry.rows.length };
  }

  /**
   * The history as of a read: the rows held at `base`, then `newer` (rows after `base.lastSeq`, oldest
   * first, `lastSeq` the highest of them, or of the session, when known). Returns a fresh array.
   */
  extend(sessionId: string, base: HistoryBase, newer: readonly ModeChange[], lastSeq: number): ModeChange[] {
    const history = base.length === 0 ? [] : base.rows.slice(0, base.length);
    for (const change of newer) history.push(Object.freeze(change));
    this.#remember(sessionId, base, history, lastSeq);
    return history;
  }

  /** Forgets a session (it was not found). */
  forget(sessionId: string): void {
    const entry = this.#entries.get(sessionId);
    if (entry === undefined) return;
    this.#rows -= entry.rows.length;
    this.#entries.delete(sessionId);
  }

  #remember(sessionId: string, base: HistoryBase, history: readonly ModeChange[], lastSeq: number): void {
    const entry = this.#entries.get(sessionId);
    if (entry !== undefined && entry.lastSeq >= lastSeq) {
      this.#touch(sessionId, entry);
      return; // a later read already got further
    }
    if (entry !== undefined && entry.rows === base.rows && entry.rows.length === base.length) {
      // Nothing was appended since this read began: append in place, so the held array is never copied.
      for (let i = base.length; i < history.length; i++) entry.rows.push(history[i]!);
      this.#rows += history.length - base.length;
      entry.lastSeq = lastSeq;
      this.#touch(sessionId, entry);
    } else {
      if (entry !== undefined) this.#rows -= entry.rows.length;
      this.#entries.delete(sessionId);
      this.#entries.set(sessionId, { lastSeq, rows: history.slice() });
      this.#rows += history.length;
    }
    this.#evict(sessionId);
  }

  #touch(sessionId: string, entry: Entry): void {
    // A Map iterates in insertion order: re-inserting marks the session as the most recently used.
    this.#entries.delete(sessionId);
    this.#entries.set(sessionId, entry);
  }

  #evict(keep: string): void {
    for (const [sessionId, entry] of this.#entries) {
      if (this.#rows <= this.maxRows || sessionId === keep) break;
      this.#rows -= entry.rows.length;
      this.#entries.delete(sessionId);
    }
  }
}
