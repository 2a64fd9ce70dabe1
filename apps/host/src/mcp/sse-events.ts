/** Server-sent events as the MCP routes write them: headers, frames, and the pieces a response stream is made of. */

/** The SDK's SSE response headers, but for Connection: Node sets it, with the Keep-Alive time-out clients pool sockets by. */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

export const encoder = new TextEncoder();

/** One event: its id, its type, its data (each line of it a `data:` line). */
export function frame(id: string, event: string, data: string): string {
  return `id: ${id}\nevent: ${event}\n${data
    .split('\n')
    .map((line) => `data: ${line}`)
    .join('\n')}\n\n`;
}

/** Where a stream's events go now: a web stream (the SDK path, a resume) or a fast-lane response. */
export interface Listener {
  write(text: string): void;
  close(): void;
}

/** A web stream's controller as a listener. */
export function webListener(controller: ReadableStreamDefaultController<Uint8Array>): Listener {
  return { write: (text) => controller.enqueue(encoder.encode(text)), close: () => controller.close() };
}

/** Whether an event's data is the JSON-RPC response (result or error) to request `id`. */
export function answers(data: string, id: string | number | null): boolean {
  if (id === null || data === '') return false;
  try {
    const message = JSON.parse(data) as { id?: unknown; result?: unknown; error?: unknown };
    return message.id === id && (message.result !== undefined || message.error !== undefined);
  } catch {
    return false;
  }
}

export type ErrorAnswer = { readonly status: number; readonly code: number; readonly message: string };

/** A JSON-RPC error as a web response, without an id (it answers no request). */
export function errorAnswer({ status, code, message }: ErrorAnswer): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}
