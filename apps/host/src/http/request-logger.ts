import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

type LevelMethod = (...args: unknown[]) => void;

/**
 * A request's logger (`request.log`, passed down to the executor and the tools): every line it writes
 * carries its bindings (`reqId`, then `actor`). Fastify makes one for every request, and most requests
 * log nothing below `info` but their access line: so the pino child that holds the bindings is made
 * on the first line that needs one, not per request. A line logged before the child exists, with an
 * object of fields and a message (the access line), goes to the parent with the bindings merged in
 * first, which writes the same JSON without making the child at all.
 */
export class RequestLogger {
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  #child: Logger | undefined;

  constructor(parent: Logger, bindings: Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  /** The level is the host's, set once at start (Fastify reads it; it is never changed per request). */
  get level(): string {
    return this.#parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    if (options !== undefined && Object.keys(options).length > 0) return this.#logger().child(bindings, options) as FastifyBaseLogger;
    return new RequestLogger(this.#child ?? this.#parent, this.#child === undefined ? { ...this.#bindings, ...bindings } : bindings).asFastifyLogger();
  }

  /** Fastify's logger type: pino's overloaded level methods, which the prototype's methods below implement. */
  asFastifyLogger(): FastifyBaseLogger {
    return this as unknown as FastifyBaseLogger;
  }

  #logger(): Logger {
    return (this.#child ??= this.#parent.child(this.#bindings));
  }

  /** One line at `level`, when the level is on; see the class comment for when the child is made. */
  static write(logger: RequestLogger, level: Level, args: unknown[]): void {
    const child = logger.#child;
    if (!(child ?? logger.#parent).isLevelEnabled(level)) return;
    const [first, message] = args;
    if (child === undefined && args.length === 2 && typeof message === 'string' && isPlainObject(first)) {
      logger.#parent[level](Object.assign({}, logger.#bindings, first), message);
      return;
    }
    (logger.#logger()[level] as LevelMethod)(...args);
  }

  silent(): void {}
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
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

/**
 * Fastify's `childLoggerFactory`: each request's {@link RequestLogger}, over `parent` (the host's pino
 * instance) rather than over the framework's own logger, which the server does not give Fastify.
 */
export function requestLoggerFactory(parent: Logger) {
  return (_framework: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger =>
    // A route with its own level or serializers (none of the host's today) gets a real child at once.
    options.level === undefined && options.serializers === undefined ? new RequestLogger(parent, bindings).asFastifyLogger() : (parent.child(bindings, options) as FastifyBaseLogger);
}
