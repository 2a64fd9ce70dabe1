import type { FastifyReply, FastifyRequest } from 'fastify';

/** The web-standard face of /mcp (the v2 SDK serves `Request`s and answers `Response`s), over Fastify. */

export type JsonRpcId = string | number | null;

export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  id: JsonRpcId = null,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** The JSON-RPC id of a parsed request body, when it has a usable one. */
export function requestId(body: unknown): JsonRpcId {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

export function parseBody(text: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (text === undefined || text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

const SKIPPED_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade']);

/** The Fastify request as a web-standard Request (the v2 SDK's serving face), its body the raw text. */
export function toWebRequest(request: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || SKIPPED_HEADERS.has(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const body =
    request.method === 'POST' || request.method === 'DELETE' ? (request.body as string | undefined) : undefined;
  const path = request.url.startsWith('/') ? request.url : '/mcp';
  return new Request(`http://aptix.local${path}`, {
    method: request.method,
    headers,
    ...(body ? { body } : {}),
    signal,
  });
}

export async function send(
  reply: FastifyReply,
  response: Response,
  extraHeaders: Record<string, string> = {},
): Promise<FastifyReply> {
  void reply.code(response.status);
  response.headers.forEach((value, name) => void reply.header(name, value));
  for (const [name, value] of Object.entries(extraHeaders)) void reply.header(name, value);
  return reply.send(response.body ?? '');
}

/** The same response, running `done` once its body has been read to the end (or cancelled). */
export function withBody(response: Response, done: () => void): Response {
  if (response.body === null) {
    done();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done: finished, value } = await reader.read();
      if (finished) {
        done();
        controller.close();
      } else controller.enqueue(value);
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}
