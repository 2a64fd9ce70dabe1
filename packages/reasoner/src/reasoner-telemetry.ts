import { context, propagation, SpanKind, type Attributes } from '@opentelemetry/api';
import { inSpan, scopeTracer, tracingEnabled } from '@aptix/tool-contract';
import type { ModelReply } from './model-reply.js';

// The agent loop's spans, after the OpenTelemetry GenAI semantic conventions: `invoke_agent` around a
// turn, `chat <model>` around each model call (with the token usage the endpoint reports). Made only
// when an SDK is registered; otherwise each function runs its work and nothing else.

const tracer = scopeTracer('@aptix/reasoner');
const AGENT_NAME = 'aptix';

/** Runs one turn of `sessionId` in an `invoke_agent aptix` span. */
export function tracedTurn<T>(sessionId: string, model: string, run: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return run();
  return inSpan(
    tracer,
    `invoke_agent ${AGENT_NAME}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': AGENT_NAME,
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': model,
        'gen_ai.conversation.id': sessionId,
      },
    },
    run,
  );
}

/** Runs one model call in a `chat <model>` client span, and records what the reply says of its usage. */
export function tracedModelCall(
  model: string,
  endpoint: string,
  run: () => Promise<ModelReply | undefined>,
): Promise<ModelReply | undefined> {
  if (!tracingEnabled()) return run();
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': model,
  };
  try {
    const url = new URL(endpoint);
    attributes['server.address'] = url.hostname;
    if (url.port !== '') attributes['server.port'] = Number(url.port);
  } catch {
    // an endpoint that is not a URL is named as given in errors; the span goes without it
  }
  return inSpan(tracer, `chat ${model}`, { kind: SpanKind.CLIENT, attributes }, run, (span, reply) => {
    if (reply === undefined) {
      span.setAttribute('error.type', 'cancelled');
      return;
    }
    if (reply.id !== undefined) span.setAttribute('gen_ai.response.id', reply.id);
    if (reply.model !== undefined) span.setAttribute('gen_ai.response.model', reply.model);
    if (reply.usage !== undefined) {
      span.setAttribute('gen_ai.usage.input_tokens', reply.usage.input_tokens);
      span.setAttribute('gen_ai.usage.output_tokens', reply.usage.output_tokens);
    }
  });
}

/**
 * The W3C trace context of the current span as HTTP headers for the model endpoint (`traceparent`,
 * `tracestate`); undefined when tracing is off, so the request goes as before.
 */
export function traceHeaders(): Record<string, string> | undefined {
  if (!tracingEnabled()) return undefined;
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return Object.keys(headers).length === 0 ? undefined : headers;
}
