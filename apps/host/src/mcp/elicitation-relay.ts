import type { Server } from '@modelcontextprotocol/server';

/** A JSON-RPC response (or a batch of them) sent by a client: an answer to a server-to-client request. */
export function isClientResponse(body: unknown): boolean {
  const one = (message: unknown) =>
    typeof message === 'object' &&
    message !== null &&
    !('method' in message) &&
    'id' in message &&
    ('result' in message || 'error' in message);
  return Array.isArray(body) ? body.length > 0 && body.every(one) : one(body);
}

/**
 * 2025-era server-to-client requests (the approval question) under per-request servers. The question
 * goes out on the stream of the call that asks; the client's answer arrives as a separate POST with
 * the session's id, which must reach the server instance that waits. One question at a time per
 * session: request ids are numbered per server instance, so two open questions could share an id.
 * The waiting instance lives on the host that sent the question, so the answer must reach that host.
 */
export class ElicitationRelay {
  readonly #waiting = new Map<string, Server>();

  /** Claims the session's channel for `server`; false when another call already waits for an answer. */
  hold(sessionId: string, server: Server): boolean {
    if (this.#waiting.has(sessionId)) return false;
    this.#waiting.set(sessionId, server);
    return true;
  }

  release(sessionId: string, server: Server): void {
    if (this.#waiting.get(sessionId) === server) this.#waiting.delete(sessionId);
  }

  /**
   * Hands a client's answer to the server instance waiting for it (a stateless transport serves one
   * request, so the answer goes straight to its message handler); undefined when none waits here.
   */
  deliver(sessionId: string, body: unknown): Response | undefined {
    const transport = this.#waiting.get(sessionId)?.transport;
    if (transport?.onmessage === undefined) return undefined;
    for (const message of Array.isArray(body) ? body : [body]) transport.onmessage(message as never);
    return new Response(null, { status: 202 });
  }

  clear(): void {
    this.#waiting.clear();
  }
}
