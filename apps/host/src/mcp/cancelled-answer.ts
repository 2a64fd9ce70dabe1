/**
 * A 2025 request the client cancelled with `notifications/cancelled` gets no response: the
 * specification says the receiver SHOULD NOT answer it. The SDK's per-request server never sees the
 * cancellation (it arrives on another request), so its answer is taken out of the event stream here:
 * the stream's other events (progress, log messages) go out, then it ends. A resumable stream
 * (2025-11-25) is left out the same way where it is recorded (ResumableStreams), which parses its events already.
 */

import { answers } from './sse-events.js';

/** The data of one SSE event (its `data:` lines joined), as the event-stream format defines it. */
function eventData(event: string): string {
  return event
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
    .join('\n');
}

/** The response with the answer to `id` left out if `cancelled()` is true when that answer comes; other responses unchanged. */
export function withoutAnswerOnceCancelled(
  response: Response,
  id: string | number,
  cancelled: () => boolean,
): Response {
  if (response.body === null || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    return response;
  let pending = '';
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const filter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      // Events end with a blank line; one may span chunks, so only whole events are judged.
      let end = pending.indexOf('\n\n');
      while (end !== -1) {
        const event = pending.slice(0, end + 2);
        pending = pending.slice(end + 2);
        if (!(cancelled() && answers(eventData(event), id))) controller.enqueue(encoder.encode(event));
        end = pending.indexOf('\n\n');
      }
    },
    flush(controller) {
      if (pending !== '') controller.enqueue(encoder.encode(pending));
    },
  });
  return new Response(response.body.pipeThrough(filter), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
