/**
 * A tool that needs an answer from the caller's user before it can finish (MCP's multi-round-trip
 * `input_required`, protocol 2026-07-28). The tool answers with the questions and, optionally, a state
 * to resume from; the caller asks its user and calls again with the answers, and the host hands the
 * tool the answers and its state, verified (the host seals the state, so a caller cannot alter it).
 *
 * Only questions to the user (form elicitation) are offered: a tool that needs the client's model or
 * file roots has no honest use on a tools host, whose tools run on the server.
 */

/** One question to the user: MCP's form-mode `elicitation/create` parameters. */
export interface ToolInputRequest {
  readonly method: 'elicitation/create';
  readonly params: {
    readonly message: string;
    /** A flat JSON Schema object of primitive properties (MCP's restricted elicitation schema). */
    readonly requestedSchema: {
      readonly type: 'object';
      readonly properties: Readonly<Record<string, object>>;
      readonly required?: readonly string[];
    };
  };
}

/** What a tool needs to go on: the questions by key, and a JSON state it gets back on the retry. */
export interface ToolInputNeeded {
  readonly inputRequests: Readonly<Record<string, ToolInputRequest>>;
  /** Any JSON value; it comes back as `context.input.state`, unaltered (sealed by the host). At most {@link MAX_INPUT_STATE_BYTES} as JSON. */
  readonly state?: unknown;
}

/** What a call that continues a round carries (`AgentToolExecutionContext.input`). */
export interface ToolInputChannel {
  /** Whether the caller can ask its user (an MCP client that declared elicitation). When false, do not ask: answer what is missing. */
  readonly canAsk: boolean;
  /** The answers to the previous round's questions, by key: the client's data, unchecked. Validate them. */
  readonly responses: Readonly<Record<string, unknown>>;
  /** The state the tool attached to the previous round, exactly as it was (the host verified its seal); undefined on a first call. */
  readonly state?: unknown;
}

/** The largest state a tool may attach, as JSON. */
export const MAX_INPUT_STATE_BYTES = 8 * 1024;
const MAX_REQUESTS = 8;

/**
 * Checks a tool's `inputRequired`: one to eight form questions with a message and an object schema,
 * and a JSON state within the bound. Answers the problem, or undefined when it is well formed.
 */
export function inputNeededProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'inputRequired is not an object';
  const { inputRequests, state } = value as { inputRequests?: unknown; state?: unknown };
  if (typeof inputRequests !== 'object' || inputRequests === null || Array.isArray(inputRequests))
    return 'inputRequired.inputRequests is not an object of questions by key';
  const entries = Object.entries(inputRequests);
  if (entries.length === 0 || entries.length > MAX_REQUESTS)
    return `inputRequired.inputRequests must hold 1 to ${MAX_REQUESTS} questions (it holds ${entries.length})`;
  for (const [key, request] of entries) {
    const { method, params } = (request ?? {}) as {
      method?: unknown;
      params?: { message?: unknown; requestedSchema?: { type?: unknown; properties?: unknown } };
    };
    if (method !== 'elicitation/create')
      return `inputRequired.inputRequests.${key}.method must be "elicitation/create" (a question to the user)`;
    if (typeof params?.message !== 'string' || params.message.trim() === '')
      return `inputRequired.inputRequests.${key}.params.message must be the question, as text`;
    if (
      params.requestedSchema?.type !== 'object' ||
      typeof params.requestedSchema.properties !== 'object' ||
      params.requestedSchema.properties === null
    )
      return `inputRequired.inputRequests.${key}.params.requestedSchema must be an object schema with properties`;
  }
  if (state !== undefined) {
    let json: string | undefined;
    try {
      json = JSON.stringify(state);
    } catch {
      return 'inputRequired.state is not JSON-serialisable';
    }
    if (json === undefined) return 'inputRequired.state is not JSON-serialisable';
    if (Buffer.byteLength(json) > MAX_INPUT_STATE_BYTES)
      return `inputRequired.state is ${Buffer.byteLength(json)} bytes as JSON, over the limit of ${MAX_INPUT_STATE_BYTES}`;
  }
  return undefined;
}

/** The accepted form content of the answer under `key`, or undefined (missing, declined, cancelled, malformed). */
export function acceptedAnswer(input: ToolInputChannel | undefined, key: string): Record<string, unknown> | undefined {
  const answer = input?.responses[key] as { action?: unknown; content?: unknown } | undefined;
  if (typeof answer !== 'object' || answer === null || answer.action !== 'accept') return undefined;
  return typeof answer.content === 'object' && answer.content !== null && !Array.isArray(answer.content)
    ? (answer.content as Record<string, unknown>)
    : undefined;
}
