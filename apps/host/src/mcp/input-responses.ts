import { ProtocolError, ProtocolErrorCode, type ServerContext } from '@modelcontextprotocol/server';

/**
 * The `inputResponses` of a 2026-07-28 retry (the user's answers), refused when they hold a key that
 * could change a prototype. The SDK copies the answers into a new object key by key, so an own
 * `"__proto__"` key the client sent becomes that object's prototype, and every answer it holds then
 * reads as if the client had sent it (an approval included). Refused are: answers whose object has
 * another prototype than a plain object's, and an own `__proto__` key, or a `constructor` key holding
 * `prototype`, at any depth.
 *
 * @example
 * const responses = checkedInputResponses(ctx); // throws -32602 for {"__proto__": {"approval": …}}
 */
export function checkedInputResponses(ctx: ServerContext): ServerContext['mcpReq']['inputResponses'] {
  const responses = ctx.mcpReq.inputResponses;
  if (holdsPrototypeKey(responses)) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'Invalid inputResponses: they hold a "__proto__" key (or a "constructor" key holding ' +
        '"prototype"), which could change the prototype of the objects built from them; the host ' +
        'refuses such answers and nothing was decided or run. Send each answer under the key of its ' +
        'input request (for an approval: "approval"), with no "__proto__" key anywhere.',
      { reason: 'forbidden_key' },
    );
  }
  return responses;
}

/** Whether a value parsed from JSON holds a prototype key, or an object whose prototype one changed; walked without recursion. */
function holdsPrototypeKey(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    const prototype: unknown = Object.getPrototypeOf(node);
    if (Array.isArray(node)) {
      if (prototype !== Array.prototype) return true;
      for (const item of node as unknown[]) pending.push(item);
      continue;
    }
    if (prototype !== Object.prototype && prototype !== null) return true;
    if (Object.hasOwn(node, '__proto__')) return true;
    const ctor = Object.hasOwn(node, 'constructor') ? (node as { constructor?: unknown }).constructor : undefined;
    if (ctor !== null && typeof ctor === 'object' && Object.hasOwn(ctor, 'prototype')) return true;
    for (const key of Object.keys(node)) pending.push((node as Record<string, unknown>)[key]);
  }
  return false;
}
