import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { SessionStoreError } from '@aptix/agent-sessions';
import type { AptixConfig } from '../config.js';
import { describeValidation, type ValidationIssue } from './validation-messages.js';

/**
 * Every code the HTTP layer itself answers with, and its status. Routes add their own domain codes
 * (TOOL_NOT_FOUND, SESSION_NOT_FOUND, …); everything the framework or the boundary refuses is here.
 */
export const HTTP_ERRORS = {
  BAD_REQUEST: 400,
  INVALID_JSON: 400,
  PROTOTYPE_KEY: 400,
  EMPTY_BODY: 400,
  BAD_URL: 400,
  DUPLICATE_HEADER: 400,
  UNAUTHORIZED: 401,
  HOST_NOT_ALLOWED: 403,
  ORIGIN_NOT_ALLOWED: 403,
  PATH_NOT_ALLOWED: 403,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  REQUEST_TIMEOUT: 408,
  BODY_TOO_LARGE: 413,
  URL_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  SHUTTING_DOWN: 503,
  NOT_READY: 503,
} as const satisfies Record<string, number>;
export type HttpErrorCode = keyof typeof HTTP_ERRORS;

/** An error a hook or parser raises on purpose: the error handler sends its code and message as they are. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly statusCode: number;
  constructor(
    readonly code: HttpErrorCode,
    message: string,
  ) {
    super(message);
    this.statusCode = HTTP_ERRORS[code];
  }
}

/** Aptix's error shape, `{ error: { code, message } }`. */
export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

export function sendError(reply: FastifyReply, code: HttpErrorCode, message: string): FastifyReply {
  return reply.code(HTTP_ERRORS[code]).send(errorBody(code, message));
}

const PROTOTYPE_MESSAGE =
  'The body has a "__proto__" key, or a "constructor" key holding "prototype", which could change the prototype of objects built from it; the host refuses such bodies. Rename or remove that key.';

/**
 * The JSON body parser: Fastify's own (secure-json-parse) says only "Body is not valid JSON" for
 * every failure; this one says which of "empty", "not JSON (where)" and "prototype key" it was.
 */
export function parseJsonBody(parse: (text: string) => unknown) {
  return (_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(
        new HttpError(
          'EMPTY_BODY',
          'The content-type is application/json but the body is empty. Send a JSON body, or leave out the content-type header when there is nothing to send.',
        ),
      );
      return;
    }
    try {
      done(null, parse(text));
    } catch (error) {
      const message = (error as Error).message;
      if (message.includes('forbidden prototype property')) done(new HttpError('PROTOTYPE_KEY', PROTOTYPE_MESSAGE));
      else
        done(
          new HttpError(
            'INVALID_JSON',
            `The body is not valid JSON (${message}). Send one JSON document with content-type: application/json.`,
          ),
        );
    }
  };
}

/** Why a framework error happened and what to send instead, as `[code, message]`. */
function describeFrameworkError(
  error: FastifyError & { validation?: ValidationIssue[]; validationContext?: string },
  request: FastifyRequest,
  config: AptixConfig,
): [string, string] {
  if (error.validation) return ['BAD_REQUEST', describeValidation(error.validation, error.validationContext ?? 'body')];
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return [
        'BODY_TOO_LARGE',
        `The request body is larger than the limit of ${config.bodyLimitBytes} bytes. Send a smaller body (the limit is bodyLimitBytes in the host's configuration).`,
      ];
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      const type = request.headers['content-type'];
      return [
        'UNSUPPORTED_MEDIA_TYPE',
        type === undefined
          ? 'The request has a body but no content-type. Send content-type: application/json with a JSON body.'
          : `Content-type "${type}" is not accepted. Send content-type: application/json with a JSON body.`,
      ];
    }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return [
        'EMPTY_BODY',
        'The content-type is application/json but the body is empty. Send a JSON body, or leave out the content-type header when there is nothing to send.',
      ];
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return [
        'BAD_REQUEST',
        'The body is not as long as the Content-Length header says. Send a Content-Length that matches the body.',
      ];
    default:
      if (error instanceof HttpError) return [error.code, error.message];
      // The console's static files (@fastify/static) refuse a path with dot segments this way.
      if (error.statusCode === 403)
        return [
          'PATH_NOT_ALLOWED',
          'The path holds a dot segment ("." or "..") or another part a file path may not have. Ask for the file by its plain path, e.g. /console/console.js.',
        ];
      return ['BAD_REQUEST', error.message];
  }
}

/** The error handler: Aptix's shape for every error, no stack and no internals in any answer. */
/**
 * What a caller is told when the session store failed in a way that passes (locked, slow, unreachable):
 * 503 with the store's code and a message of the host's own, since the store's names the database.
 */
const STORE_FAILURES: Readonly<Record<string, string>> = {
  DATABASE_LOCKED: 'The session database is locked by another process. Nothing was changed; retry shortly.',
  TIMEOUT: 'The session store did not answer in time. Nothing was changed; retry shortly.',
  UNAVAILABLE: 'The session store cannot be reached. Nothing was changed; retry shortly or on another host.',
  OUTCOME_UNKNOWN:
    'The connection to the session store broke while saving, so the change may or may not have been saved. Read the session (GET /v1/sessions/:id) before retrying.',
};

/** How many times the body limit a declared body may be and still be read to its end after its 413 (see {@link keepReadingTooLargeBody}). */
const LINGER_FACTOR = 4;

/**
 * After a 413 for a body declared at most {@link LINGER_FACTOR} times the limit, keeps the connection
 * and reads the rest of the body, throwing it away (Node does, once the answer is sent), instead of
 * closing at once as Fastify asks: a socket closed while its client is still sending is reset by the
 * kernel, and a client that had not read the 413 yet (fetch, here) reports a broken pipe instead of the
 * answer that says what was wrong. A body declared larger, or one without a declared length, is cut off
 * at once; requestTimeoutMs bounds the reading either way.
 */
export function keepReadingTooLargeBody(request: FastifyRequest, reply: FastifyReply, limit: number): void {
  const declared = Number(request.headers['content-length']);
  if (Number.isSafeInteger(declared) && declared <= LINGER_FACTOR * limit) reply.removeHeader('connection');
}

export function handleError(config: AptixConfig) {
  return (error: FastifyError & { validation?: ValidationIssue[] }, request: FastifyRequest, reply: FastifyReply) => {
    const storeMessage = error instanceof SessionStoreError ? STORE_FAILURES[error.code] : undefined;
    if (storeMessage !== undefined) {
      request.log.warn({ err: error }, 'the session store failed');
      return reply
        .code(503)
        .header('retry-after', '1')
        .send(errorBody((error as SessionStoreError).code, storeMessage));
    }
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return reply
        .code(500)
        .send(errorBody('INTERNAL', 'The host failed to answer this request. See the host logs for the request id.'));
    }
    const [code, message] = describeFrameworkError(error, request, config);
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') keepReadingTooLargeBody(request, reply, config.bodyLimitBytes);
    return reply.code(status).send(errorBody(code, message));
  };
}

/** Fastify's `frameworkErrors`: a path the router cannot decode, or a segment longer than it accepts. */
export function frameworkErrors(maxParamLength: number) {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    if (error.code === 'FST_ERR_BAD_URL') {
      return sendError(
        reply,
        'BAD_URL',
        'The path has invalid percent-encoding. Encode "%" as %25, and every other reserved character as % and two hex digits.',
      );
    }
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      return sendError(
        reply,
        'URL_TOO_LONG',
        `A path segment is longer than ${maxParamLength} characters; tool names and session ids are shorter. Check the URL.`,
      );
    }
    return sendError(reply, 'BAD_REQUEST', error.message);
  };
}

/**
 * Fastify's `clientErrorHandler`: what Node refuses before any route runs (headers too large, a
 * request that takes too long to arrive, bytes that are not HTTP), answered in Aptix's shape and the
 * connection closed.
 */
export function clientErrorHandler(config: AptixConfig) {
  return (error: Error & { code?: string }, socket: Socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    let code: HttpErrorCode;
    let message: string;
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      code = 'HEADERS_TOO_LARGE';
      message =
        'The request line and headers are larger than the host accepts (16 KiB). Send fewer or shorter headers, and a shorter URL.';
    } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      code = 'REQUEST_TIMEOUT';
      message = `The request did not arrive in full within ${config.requestTimeoutMs} ms (headers within ${config.headersTimeoutMs} ms). Send the whole request at once.`;
    } else {
      code = 'BAD_REQUEST';
      message = 'The request is not valid HTTP/1.1. Send a request line, headers and a body as HTTP/1.1 defines them.';
    }
    if (socket.writable) {
      const body = JSON.stringify(errorBody(code, message));
      const status = HTTP_ERRORS[code];
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
