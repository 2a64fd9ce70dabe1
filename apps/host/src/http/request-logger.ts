import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';
import type { AccessLineWriter } from '../logger.js';

type LevelMethod = (...args: unknown[]) => void;

/**
 * A request's logger (`request.log`, passed down to the executor and the tools): every line it writes
 * carries its bindings (`reqId`, then `actor`). The host makes one for every request, and most requests
 * log nothing (above info) or only their access line (at info): so the pino child that holds the
 * bindings is made on the request's first other line, not for every request (see server.ts).
 */
export class RequestLogger {
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  /** Set when the bindings are the request id alone (no key's name yet): the access line writes it as its first field. */
  readonly #reqId: string | undefined;
  #child: Logger | undefined;

  constructor(parent: Logger, bindings: Bindings, reqId?: string) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#reqId = reqId;
  }

  /** A request's logger, whose lines carry its id. */
  static forRequest(parent: Logger, reqId: string): RequestLogger {
    return new RequestLogger(parent, { reqId }, reqId);
  }

  /**
   * The request's access line at info: through its child when one was made, else through the parent
   * with the bindings as the first fields: the same JSON, in the same order, without a child for one
   * line (a pino child per request cost more than the rest of the access line). A request id alone is
   * written out as a field, not merged with the others (a merge cost about 4k instructions, callgrind),
   * by `accessLine` when the host's logger has one (see accessLineWriter).
   */
  completed(
    method: string,
    url: string,
    statusCode: number,
    responseTime: number,
    accessLine?: AccessLineWriter,
  ): void {
    if (this.#child !== undefined) this.#child.info({ method, url, statusCode, responseTime }, 'request completed');
    else if (this.#reqId !== undefined) {
      if (accessLine !== undefined) accessLine(this.#reqId, method, url, statusCode, responseTime);
      else this.#parent.info({ reqId: this.#reqId, method, url, statusCode, responseTime }, 'request completed');
    } else
      this.#parent.info(
        Object.assign({}, this.#bindings, { method, url, statusCode, responseTime }),
        'request completed',
      );
  }

  /** The level is the host's, set once at start (Fastify reads it; it is never changed per request). */
  get level(): string {
    return this.#parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    if (options !== undefined && Object.keys(options).length > 0)
      return this.#logger().child(bindings, options) as FastifyBaseLogger;
    return new RequestLogger(
      this.#child ?? this.#parent,
      this.#child === undefined ? Object.assign({}, this.#bindings, bindings) : bindings,
    ).asFastifyLogger();
  }

  /** Fastify's logger type: pino's overloaded level methods, which the prototype's methods below implement. */
  asFastifyLogger(): FastifyBaseLogger {
    return this as unknown as FastifyBaseLogger;
  }

  #logger(): Logger {
    return (this.#child ??= this.#parent.child(this.#bindings));
  }

  /** One line at `level`, when the level is on, through the child (made now if it is the first). */
  static write(logger: RequestLogger, level: Level, args: unknown[]): void {
    if ((logger.#child ?? logger.#parent).isLevelEnabled(level)) (logger.#logger()[level] as LevelMethod)(...args);
  }

  silent(): void {}
}

// The level methods, on the prototype (one set for every request, none made per request).
for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const) {
  Object.defineProperty(RequestLogger.prototype, level, {
    value: function (this: RequestLogger, ...args: unknown[]) {
      RequestLogger.write(this, level, args);
    },
    writable: true,
    configurable: true,
  });
}
