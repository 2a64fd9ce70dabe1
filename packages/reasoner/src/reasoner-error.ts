/**
 * Every stable code the Reasoner puts on an error it throws, kept in one place. Codes are API: hosts
 * branch on them (and map them to HTTP statuses with {@link ReasonerError.httpStatus}), so a code is
 * never renamed or reused.
 */
export const ReasonerErrorCode = {
  /** Start-up: no model name was given. */
  MODEL_NOT_CONFIGURED: 'MODEL_NOT_CONFIGURED',
  /** Start-up: the default OpenAI endpoint is used without an API key. */
  API_KEY_MISSING: 'API_KEY_MISSING',
  /** Start-up: an option has an impossible value (a step limit of 0, a base URL that is no URL…). */
  INVALID_OPTION: 'INVALID_OPTION',
  /** Start-up: a tool offered in some mode has no usage metadata to put in the instructions (AGN-005 §7.2.3). */
  USAGE_METADATA_MISSING: 'USAGE_METADATA_MISSING',
  /** Start-up: the mode catalog and the registry disagree (an unknown mode, an unregistered tool), or a tool cannot be built. */
  CATALOG_MISMATCH: 'CATALOG_MISMATCH',
  /** Start-up: a tool offered in some mode cannot be built, so whether the client or the server completes it is unknown. */
  TOOL_UNAVAILABLE: 'TOOL_UNAVAILABLE',
  /** A turn: the session does not exist. */
  SESSION_NOT_FOUND: 'SESSION_NOT_FOUND',
  /** A turn: the session is in a mode the catalog no longer has. */
  UNKNOWN_SESSION_MODE: 'UNKNOWN_SESSION_MODE',
  /** A turn: the message is empty, or tool outputs are malformed. */
  INVALID_INPUT: 'INVALID_INPUT',
  /** A turn: the session waits for client tool outputs; a new message cannot be sent before they arrive. */
  PENDING_TOOL_CALLS: 'PENDING_TOOL_CALLS',
  /** Tool outputs were submitted for a call the session is not waiting for. */
  UNKNOWN_TOOL_CALL: 'UNKNOWN_TOOL_CALL',
  /** The model endpoint could not be reached or answered with an HTTP error. */
  MODEL_REQUEST_FAILED: 'MODEL_REQUEST_FAILED',
  /** The model endpoint answered, but the response failed (`response.failed`, an `error` event, a stream cut short). */
  MODEL_RESPONSE_FAILED: 'MODEL_RESPONSE_FAILED',
} as const;
export type ReasonerErrorCode = (typeof ReasonerErrorCode)[keyof typeof ReasonerErrorCode];

/** The HTTP status a host answers with for each code: configuration problems are 503, endpoint problems 502. */
const HTTP_STATUS: { readonly [C in ReasonerErrorCode]: number } = {
  MODEL_NOT_CONFIGURED: 503,
  API_KEY_MISSING: 503,
  INVALID_OPTION: 503,
  USAGE_METADATA_MISSING: 503,
  CATALOG_MISMATCH: 503,
  TOOL_UNAVAILABLE: 503,
  SESSION_NOT_FOUND: 404,
  UNKNOWN_SESSION_MODE: 500,
  INVALID_INPUT: 400,
  PENDING_TOOL_CALLS: 409,
  UNKNOWN_TOOL_CALL: 409,
  MODEL_REQUEST_FAILED: 502,
  MODEL_RESPONSE_FAILED: 502,
};

/**
 * What the Reasoner throws: configuration errors at start-up, and the few turn failures no model can
 * fix (an unknown session, an unreachable endpoint). Tool failures are never thrown: they go back to
 * the model as error payloads. The message says what is wrong and how to fix it.
 */
export class ReasonerError extends Error {
  override readonly name = 'ReasonerError';
  readonly code: ReasonerErrorCode;
  /** The status an HTTP host should answer with (`reply.code(error.httpStatus)`). */
  readonly httpStatus: number;

  constructor(code: ReasonerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.httpStatus = HTTP_STATUS[code];
  }
}
