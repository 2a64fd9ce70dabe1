import { AsyncLocalStorage } from 'node:async_hooks';

/** The request a piece of work belongs to; pino's mixin adds it to every log line written for it. */
export const requestContext = new AsyncLocalStorage<{ readonly reqId: string }>();

/** A pino mixin adding the current request id, if any. */
export function requestIdMixin(): Record<string, unknown> {
  const store = requestContext.getStore();
  return store === undefined ? {} : { reqId: store.reqId };
}
