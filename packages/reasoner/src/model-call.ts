import OpenAI from 'openai';
import type { Response, ResponseCreateParamsBase, ResponseOutputItem } from 'openai/resources/responses/responses';
import { traceHeaders } from './reasoner-telemetry.js';
import { textOf } from './conversation.js';
import { ReasonerError, ReasonerErrorCode } from './reasoner-error.js';
import type { ModelReply } from './model-reply.js';

// In a module of its own, so that reasoner-telemetry.ts (which reads a reply) is not imported back.
export type { ModelReply } from './model-reply.js';

export interface ModelCallOptions {
  readonly stream: boolean;
  readonly signal: AbortSignal | undefined;
  /** Receives the visible text as it arrives (once, whole, when not streaming). */
  readonly onTextDelta: (delta: string) => void;
  /** Named in error messages: the base URL. */
  readonly endpoint: string;
}

/**
 * One Responses API call through the official SDK, streaming or not. Returns `undefined` when the
 * caller's signal aborted it; every other failure is a {@link ReasonerError} naming the endpoint,
 * the model and what to check.
 */
export async function callModel(
  client: OpenAI,
  body: ResponseCreateParamsBase,
  options: ModelCallOptions,
): Promise<ModelReply | undefined> {
  const { signal } = options;
  try {
    const reply = options.stream ? await streamed(client, body, options) : await unstreamed(client, body, options);
    return signal?.aborted ? undefined : reply;
  } catch (error) {
    if (signal?.aborted) return undefined;
    throw explain(error, body.model ?? '(no model)', options.endpoint);
  }
}

async function streamed(
  client: OpenAI,
  body: ResponseCreateParamsBase,
  options: ModelCallOptions,
): Promise<ModelReply> {
  const stream = await client.responses.create({ ...body, stream: true }, requestOptions(options));
  const finished: ResponseOutputItem[] = [];
  let output: readonly ResponseOutputItem[] | undefined;
  let completed: Response | undefined;
  for await (const event of stream) {
    switch (event.type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (event.delta !== '') options.onTextDelta(event.delta);
        break;
      case 'response.output_item.done':
        finished[event.output_index] = event.item;
        break;
      case 'response.completed':
      case 'response.incomplete':
        output = event.response.output;
        completed = event.response;
        break;
      case 'response.failed':
        throw failedResponse(event.response.error?.message ?? 'no reason given', event.response.error?.code);
      case 'error':
        throw failedResponse(event.message, event.code);
      default:
        break;
    }
  }
  // The SDK ends the iteration quietly when the signal aborts: the caller checks the signal.
  if (options.signal?.aborted) return { output: [] };
  if (output === undefined) throw failedResponse('the stream ended before "response.completed"', null);
  // Some compatible servers send a bare "response.completed": fall back to the items streamed one by one.
  return {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    output: output.length > 0 ? output : finished.filter((item) => item !== undefined),
    ...described(completed),
  };
}

async function unstreamed(
  client: OpenAI,
  body: ResponseCreateParamsBase,
  options: ModelCallOptions,
): Promise<ModelReply> {
  const response = await client.responses.create({ ...body, stream: false }, requestOptions(options));
  if (response.status === 'failed')
    throw failedResponse(response.error?.message ?? 'no reason given', response.error?.code);
  const text = textOf(response.output);
  if (text !== '') options.onTextDelta(text);
  return { output: response.output, ...described(response) };
}

/** The request options of a model call: the caller's signal, and the trace context when tracing is on. */
function requestOptions(options: ModelCallOptions): {
  signal: AbortSignal | undefined;
  headers?: Record<string, string>;
} {
  const headers = traceHeaders();
  return headers === undefined ? { signal: options.signal } : { signal: options.signal, headers };
}

/** The id, model and usage of a response, for the call's span. */
function described(response: Response | undefined): Omit<ModelReply, 'output'> {
  if (response === undefined) return {};
  return {
    id: response.id,
    model: response.model,
    ...(response.usage
      ? { usage: { input_tokens: response.usage.input_tokens, output_tokens: response.usage.output_tokens } }
      : {}),
  };
}

/** A marker: the response itself failed, as opposed to the request. */
class FailedResponse extends Error {
  constructor(
    message: string,
    readonly code: string | null | undefined,
  ) {
    super(message);
  }
}

function failedResponse(message: string, code: string | null | undefined): FailedResponse {
  return new FailedResponse(message, code);
}

function explain(error: unknown, model: string, endpoint: string): ReasonerError {
  if (error instanceof ReasonerError) return error;
  if (error instanceof FailedResponse) {
    return new ReasonerError(
      ReasonerErrorCode.MODEL_RESPONSE_FAILED,
      `Model "${model}" at ${endpoint} failed to produce a ` +
        `response${error.code ? ` (${error.code})` : ''}: ${error.message}. The conversation is ` +
        `kept; send the message again, or check the endpoint's logs.`,
      { cause: error },
    );
  }
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new ReasonerError(
      ReasonerErrorCode.MODEL_REQUEST_FAILED,
      `Model "${model}" at ${endpoint} did not answer in time. Try again, or raise the model time-out.`,
      { cause: error },
    );
  }
  if (error instanceof OpenAI.APIConnectionError) {
    const reason = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return new ReasonerError(
      ReasonerErrorCode.MODEL_REQUEST_FAILED,
      `The model endpoint ${endpoint} could not be reached${reason}. Check OPENAI_BASE_URL and that the server is running.`,
      { cause: error },
    );
  }
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    const detail = (error.error as { message?: unknown } | undefined)?.message;
    const what = typeof detail === 'string' && detail !== '' ? detail : error.message;
    if (status === undefined) {
      return new ReasonerError(
        ReasonerErrorCode.MODEL_RESPONSE_FAILED,
        `Model "${model}" at ${endpoint} reported an error in its response: ${what}.`,
        { cause: error },
      );
    }
    return new ReasonerError(
      ReasonerErrorCode.MODEL_REQUEST_FAILED,
      `The model endpoint ${endpoint} refused the request for model "${model}" with HTTP ${status}: ${what}. ${hintFor(status)}`,
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ReasonerError(
    ReasonerErrorCode.MODEL_REQUEST_FAILED,
    `The call to model "${model}" at ${endpoint} failed: ${message}.`,
    { cause: error },
  );
}

function hintFor(status: number): string {
  if (status === 401 || status === 403) return 'Check OPENAI_API_KEY.';
  if (status === 404)
    return 'Check APTIX_MODEL and OPENAI_BASE_URL: the endpoint must serve this model and the Responses API at <base URL>/responses.';
  if (status === 429) return 'The endpoint is rate-limiting: wait and send the message again.';
  if (status >= 500) return 'The endpoint failed: send the message again, or check its logs.';
  return 'Check that the endpoint supports the Responses API with function tools.';
}
