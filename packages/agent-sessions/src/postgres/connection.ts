/**
 * Every round trip the PostgreSQL store makes goes through here, so each one is bounded: waiting for a
 * connection, each statement, and the whole wait for an answer. A server that stops answering, a row
 * lock held by someone else, or an aborted signal ends the call within those bounds with a
 * {@link SessionStoreError}, instead of leaving it (and the caller) waiting for as long as it lasts.
 */
import { createHash } from 'node:crypto';
import { connect as netConnect } from 'node:net';
import { Client, type ClientConfig, type Pool, type PoolClient, type QueryResult, type QueryResultRow } from 'pg';
import { SessionStoreError } from '../errors.js';
import type { PostgresTimeouts } from '../types.js';

export type { PostgresTimeouts };

export const DEFAULT_POSTGRES_TIMEOUTS: Required<PostgresTimeouts> = Object.freeze({
  connectionTimeoutMs: 5_000,
  statementTimeoutMs: 10_000,
  lockTimeoutMs: 5_000,
  queryTimeoutMs: 15_000,
  idleInTransactionTimeoutMs: 60_000,
});

/**
 * The connection class of the pool the store creates: each new connection must complete within
 * `connectionTimeoutMs`. Set here rather than as the pool's `connectionTimeoutMillis`, which would also
 * cut the wait for a free connection in the pool (see {@link PgGateway}).
 */
export function clientWithConnectTimeout(connectionTimeoutMs: number): typeof Client {
  return class BoundedClient extends Client {
    constructor(config?: string | ClientConfig) {
      super({
        ...(typeof config === 'string' ? { connectionString: config } : config),
        connectionTimeoutMillis: connectionTimeoutMs,
      });
    }
  };
}

/** The time-outs with defaults filled in; refuses values that are not whole milliseconds. */
export function resolveTimeouts(given: PostgresTimeouts = {}): Required<PostgresTimeouts> {
  const resolved = { ...DEFAULT_POSTGRES_TIMEOUTS };
  for (const key of Object.keys(DEFAULT_POSTGRES_TIMEOUTS) as (keyof PostgresTimeouts)[]) {
    const value = given[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new SessionStoreError(
        'INVALID_ARGUMENT',
        `postgres.timeouts.${key} must be a whole number of milliseconds, 0 or more; got ${JSON.stringify(value)}.`,
      );
    }
    resolved[key] = value;
  }
  return resolved;
}

const LOCK_NOT_AVAILABLE = '55P03';
const QUERY_CANCELED = '57014';
const IDLE_IN_TRANSACTION_TIMEOUT = '25P03';
/** SQLSTATE classes that mean the connection or server is gone, not that the statement was wrong. */
const CONNECTION_CLASSES = ['08', '57P'];

function sqlState(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Why a query ended without an answer from the server: the store gave up waiting, or the caller aborted. */
class Unanswered extends Error {
  constructor(readonly why: 'timeout' | 'aborted') {
    super(why);
  }
}

/** Runs `promise` against a timer and a signal: whichever ends first decides. */
function bounded<T>(promise: Promise<T>, timeoutMs: number, signal: AbortSignal | undefined): Promise<T> {
  if (signal?.aborted) return Promise.reject(new Unanswered('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => finish(() => reject(new Unanswered('aborted')));
    const timer =
      timeoutMs > 0 ? setTimeout(() => finish(() => reject(new Unanswered('timeout'))), timeoutMs) : undefined;
    let done = false;
    function finish(settle: () => void) {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}

/**
 * Asks the server to cancel whatever the connection is running (the protocol's CancelRequest, sent on a
 * connection of its own), without waiting for an answer: best effort, and bounded, since a frozen server
 * never answers. The connection is dropped anyway; this frees the server's side of it (a lock wait) sooner.
 */
function requestCancel(client: PoolClient, timeoutMs: number): void {
  const target = client as unknown as { processID?: unknown; secretKey?: unknown; host?: unknown; port?: unknown };
  const { processID, secretKey, host, port } = target;
  if (
    typeof processID !== 'number' ||
    typeof secretKey !== 'number' ||
    typeof host !== 'string' ||
    typeof port !== 'number'
  )
    return;
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(80877102, 4); // the CancelRequest code
  message.writeInt32BE(processID, 8);
  message.writeInt32BE(secretKey, 12);
  const socket = host.startsWith('/') ? netConnect(`${host}/.s.PGSQL.${port}`) : netConnect(port, host);
  socket.setTimeout(Math.max(1, timeoutMs), () => socket.destroy());
  socket.on('error', () => undefined);
  socket.on('connect', () => socket.end(message));
  socket.on('close', () => socket.destroy());
}

/**
 * A statement PostgreSQL parses and plans once per connection, then runs by name: for the reads on
 * every tool call. The name must be unique per text on a connection (see {@link statementName}).
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

/** A statement name for `text`, from a hash: the same text always gets the same name, within PostgreSQL's 63 characters. */
export function statementName(prefix: string, text: string): string {
  return `${prefix}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** How a query may end early. */
interface QueryBounds {
  /** Abort ends the query (and cancels it on the server); COMMIT is sent without one. */
  readonly signal?: AbortSignal;
}

/**
 * One pooled connection in use. After a query that did not get its answer (time-out, abort) or lost
 * its connection, it is `broken`: it is released with an error so the pool closes it rather than
 * hand it out again with a statement still running.
 */
export class PgConnection {
  broken: Error | undefined;

  constructor(
    private readonly client: PoolClient,
    private readonly gateway: PgGateway,
  ) {}

  async query<R extends QueryResultRow = QueryResultRow>(
    text: string | NamedStatement,
    values?: readonly unknown[],
    bounds: QueryBounds = {},
  ): Promise<QueryResult<R>> {
    if (this.broken) throw this.broken;
    const pending =
      typeof text === 'string'
        ? this.client.query<R>(text, values as unknown[] | undefined)
        : this.client.query<R>({ name: text.name, text: text.text, values: values as unknown[] | undefined });
    try {
      return await bounded(pending, this.gateway.timeouts.queryTimeoutMs, bounds.signal);
    } catch (error) {
      if (error instanceof Unanswered) {
        pending.catch(() => undefined);
        requestCancel(this.client, this.gateway.timeouts.connectionTimeoutMs);
        const failure = error.why === 'aborted' ? this.gateway.cancelled() : this.gateway.timedOut('query');
        this.broken = failure;
        throw failure;
      }
      const failure = this.gateway.classify(error);
      if (failure instanceof SessionStoreError) this.broken = failure;
      throw failure;
    }
  }

  release(): void {
    this.client.release(this.broken);
  }
}

/** What a transaction's COMMIT may end in besides success. */
export const COMMIT_UNKNOWN =
  'The connection to PostgreSQL broke while it was committing, so the change may or may not have been saved.';

/**
 * The store's way to the pool: connections acquired within a bound, statements bounded,
 * transactions that roll back on every failure and check the signal before they commit.
 */
export class PgGateway {
  readonly timeouts: Required<PostgresTimeouts>;

  constructor(
    readonly pool: Pool,
    timeouts: PostgresTimeouts,
    /** Names the database in messages, e.g. `PostgreSQL schema "public"`. */
    private readonly location: string,
  ) {
    this.timeouts = resolveTimeouts(timeouts);
  }

  /** The server-side time-outs as `SET LOCAL`s, so they hold on a pool the caller configured too. */
  get #begin(): string {
    const { statementTimeoutMs, lockTimeoutMs, idleInTransactionTimeoutMs } = this.timeouts;
    return (
      `BEGIN; SET LOCAL statement_timeout = ${statementTimeoutMs}; SET LOCAL lock_timeout = ${lockTimeoutMs}; ` +
      `SET LOCAL idle_in_transaction_session_timeout = ${idleInTransactionTimeoutMs}`
    );
  }

  /** Runs `work` on one connection, released (or dropped, when broken) afterwards. */
  async withConnection<T>(signal: AbortSignal | undefined, work: (connection: PgConnection) => Promise<T>): Promise<T> {
    const connection = new PgConnection(await this.#acquire(signal), this);
    try {
      return await work(connection);
    } finally {
      connection.release();
    }
  }

  /** One statement on a connection of its own. */
  async query<R extends QueryResultRow = QueryResultRow>(
    text: string | NamedStatement,
    values?: readonly unknown[],
    signal?: AbortSignal,
  ): Promise<QueryResult<R>> {
    return this.withConnection(signal, (connection) => connection.query<R>(text, values, { signal }));
  }

  /**
   * Runs `work` in one transaction. Any failure, or the signal aborted by the time `work` returns, rolls
   * it back and throws (`CANCELLED` for the signal): nothing was committed. Once COMMIT is sent the
   * signal no longer counts: the change is committed, or, when the connection breaks before the server
   * says which, the call throws `OUTCOME_UNKNOWN`.
   */
  async transaction<T>(signal: AbortSignal | undefined, work: (connection: PgConnection) => Promise<T>): Promise<T> {
    return this.withConnection(signal, async (connection) => {
      let result: T;
      try {
        await connection.query(this.#begin, undefined, { signal });
        result = await work(connection);
        if (signal?.aborted) throw this.cancelled();
      } catch (error) {
        await this.#rollBack(connection);
        throw error;
      }
      try {
        await connection.query('COMMIT');
      } catch (error) {
        // A server error that is not about the connection is an answer: the transaction rolled back.
        // Anything else (a time-out, a broken connection) left the commit unanswered.
        if (!(error instanceof SessionStoreError)) throw error;
        throw new SessionStoreError(
          'OUTCOME_UNKNOWN',
          `${COMMIT_UNKNOWN} Read the session again to learn which (${this.location}).`,
          { cause: error },
        );
      }
      return result;
    });
  }

  async #rollBack(connection: PgConnection): Promise<void> {
    if (connection.broken) return; // dropping the connection rolls the transaction back
    try {
      await connection.query('ROLLBACK');
    } catch {
      // The connection is marked broken by the failed query and dropped on release: that rolls back too.
      connection.broken ??= new Error('ROLLBACK failed');
    }
  }

  async #acquire(signal: AbortSignal | undefined): Promise<PoolClient> {
    const connecting = this.pool.connect();
    try {
      return await bounded(connecting, this.#acquireTimeoutMs, signal);
    } catch (error) {
      if (error instanceof Unanswered) {
        // The connection may still arrive: hand it back to the pool then.
        connecting.then(
          (client) => client.release(),
          () => undefined,
        );
        throw error.why === 'aborted' ? this.cancelled() : this.timedOut('pool');
      }
      const message = error instanceof Error ? error.message : String(error);
      if (/timeout/i.test(message)) throw this.timedOut('connection', error);
      throw new SessionStoreError(
        'UNAVAILABLE',
        `Cannot connect to the ${this.location}: ${message}. Check that PostgreSQL is running and reachable.`,
        { cause: error },
      );
    }
  }

  cancelled(): SessionStoreError {
    return new SessionStoreError(
      'CANCELLED',
      `The call was cancelled before anything was committed to the ${this.location}; nothing was changed.`,
    );
  }

  /**
   * Waiting for a pooled connection: a new one must connect within `connectionTimeoutMs` (the store's
   * pool sets that on each connection), but a call may queue behind busy connections for as long as it
   * would wait for an answer, `queryTimeoutMs`, so a burst of calls is served rather than refused.
   */
  get #acquireTimeoutMs(): number {
    return Math.max(this.timeouts.connectionTimeoutMs, this.timeouts.queryTimeoutMs);
  }

  timedOut(which: 'connection' | 'pool' | 'query', cause?: unknown): SessionStoreError {
    const message =
      which === 'connection'
        ? `No connection to the ${this.location} within connectionTimeoutMs (${this.timeouts.connectionTimeoutMs} ms): the server is down or not answering.`
        : which === 'pool'
          ? `No connection to the ${this.location} within ${this.#acquireTimeoutMs} ms (the larger of ` +
            `connectionTimeoutMs and queryTimeoutMs): the server is not answering, or every pooled ` +
            `connection stayed busy (raise poolSize).`
          : `The ${this.location} did not answer within queryTimeoutMs ` +
            `(${this.timeouts.queryTimeoutMs} ms): the server is not answering. The statement was ` +
            `cancelled and its connection dropped; nothing was committed.`;
    return new SessionStoreError('TIMEOUT', message, { cause });
  }

  /**
   * A driver or server error as a {@link SessionStoreError} when it says something about the database
   * (a time-out, a broken connection); any other server error (a constraint) is returned unchanged.
   */
  classify(error: unknown): unknown {
    if (error instanceof SessionStoreError) return error;
    const state = sqlState(error);
    const detail = error instanceof Error ? error.message : String(error);
    if (state === LOCK_NOT_AVAILABLE) {
      return new SessionStoreError(
        'TIMEOUT',
        `Waited longer than lockTimeoutMs (${this.timeouts.lockTimeoutMs} ms) for a lock in the ${this.location}: another transaction holds the session. Nothing was changed; try again.`,
        { cause: error },
      );
    }
    if (state === QUERY_CANCELED) {
      return new SessionStoreError(
        'TIMEOUT',
        `A statement ran longer than statementTimeoutMs (${this.timeouts.statementTimeoutMs} ms) in the ${this.location} and was cancelled; nothing was committed.`,
        {
          cause: error,
        },
      );
    }
    if (
      state === undefined ||
      state === IDLE_IN_TRANSACTION_TIMEOUT ||
      CONNECTION_CLASSES.some((prefix) => state.startsWith(prefix))
    ) {
      return new SessionStoreError(
        'UNAVAILABLE',
        `The connection to the ${this.location} failed (${detail}); nothing was committed.`,
        { cause: error },
      );
    }
    return error;
  }
}
