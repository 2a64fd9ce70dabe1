import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request a piece of work belongs to, and who asked for it (the name of the API key that
 * authenticated the request). pino's mixin adds both to every log line written for it.
 */
export interface RequestContext {
  readonly reqId: string;
  /** The API key's name, set once the key is checked; never the key. */
  actor?: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

/** A pino mixin adding the current request id and actor, if any. */
export function requestIdMixin(): Record<string, unknown> {
  const store = requestContext.getStore();
  if (store === undefined) return {};
  return store.actor === undefined ? { reqId: store.reqId } : { reqId: store.reqId, actor: store.actor };
}
