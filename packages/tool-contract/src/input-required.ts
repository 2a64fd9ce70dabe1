import {
  rootsProblem,
  samplingProblem,
  type RootsInputRequest,
  type SamplingInputRequest,
} from './sampling-and-roots.js';

/**
 * A tool that needs something from the caller before it can finish (MCP's multi-round-trip
 * `input_required`, protocol 2026-07-28): an answer from the user (form elicitation), a completion
 * from the client's model (sampling) or the client's roots. The tool answers with its requests and,
 * optionally, a state to resume from; the caller answers and calls again, and the host hands the
 * tool the answers and its state, verified (the host seals the state, so a caller cannot alter it).
 * On 2025 revisions the host sends each request to the client itself and calls the tool again.
 */

/** One question to the user: MCP's form-mode `elicitation/create` parameters. */
export interface ElicitationInputRequest {
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

/** One request of a round: a question to the user, a completion from the client's model, or the client's roots. */
export type ToolInputRequest = ElicitationInputRequest | SamplingInputRequest | RootsInputRequest;

/** What a tool needs to go on: the requests by key, and a JSON state it gets back on the retry. */
export interface ToolInputNeeded {
  readonly inputRequests: Readonly<Record<string, ToolInputRequest>>;
  /** Any JSON value; it comes back as `context.input.state`, unaltered (sealed by the host). At most {@link MAX_INPUT_STATE_BYTES} as JSON. */
  readonly state?: unknown;
}

/** What a call that continues a round carries (`AgentToolExecutionContext.input`). */
export interface ToolInputChannel {
  /** Whether the caller can ask its user (an MCP client that declared elicitation). When false, do not ask: answer what is missing. */
  readonly canAsk: boolean;
  /** Whether the caller can ask its model (an MCP client that declared sampling); absent means it cannot. */
  readonly canSample?: boolean;
  /** Whether the caller can list its roots (an MCP client that declared roots); absent means it cannot. */
  readonly canListRoots?: boolean;
  /** The answers to the previous round's questions, by key: the client's data, unchecked. Validate them. */
  readonly responses: Readonly<Record<string, unknown>>;
  /** The state the tool attached to the previous round, exactly as it was (the host verified its seal); undefined on a first call. */
  readonly state?: unknown;
}

/** The largest state a tool may attach, as JSON. */
export const MAX_INPUT_STATE_BYTES = 8 * 1024;
const MAX_REQUESTS = 8;

/**
 * Checks a tool's `inputRequired`: one to eight requests (form questions with a message and an object
 * schema, sampling requests, roots requests) and a JSON state within the bound. Answers the problem,
 * or undefined when it is well formed.
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
    const where = `inputRequired.inputRequests.${key}`;
    const { method, params } = (request ?? {}) as { method?: unknown; params?: unknown };
    const problem =
      method === 'elicitation/create'
        ? questionProblem(where, params)
        : method === 'sampling/createMessage'
          ? samplingProblem(where, params)
          : method === 'roots/list'
            ? rootsProblem(where, params)
            : `${where}.method must be "elicitation/create" (a question to the user), "sampling/createMessage" (a completion from the client's model) or "roots/list" (the client's roots)`;
    if (problem !== undefined) return problem;
  }
  if (state !== undefined) {
    let json: string | undefined;
    try {
      json = JSON.stringify(state);
    } catch {
      return 'inputRequired.state is not JSON-serialisable';
    }
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, a function or a symbol, whatever its declared type says
    if (json === undefined) return 'inputRequired.state is not JSON-serialisable';
    if (Buffer.byteLength(json) > MAX_INPUT_STATE_BYTES)
      return `inputRequired.state is ${Buffer.byteLength(json)} bytes as JSON, over the limit of ${MAX_INPUT_STATE_BYTES}`;
  }
  return undefined;
}

function questionProblem(where: string, value: unknown): string | undefined {
  const params = value as { message?: unknown; requestedSchema?: { type?: unknown; properties?: unknown } } | undefined;
  if (typeof params?.message !== 'string' || params.message.trim() === '')
    return `${where}.params.message must be the question, as text`;
  if (
    params.requestedSchema?.type !== 'object' ||
    typeof params.requestedSchema.properties !== 'object' ||
    params.requestedSchema.properties === null
  )
    return `${where}.params.requestedSchema must be an object schema with properties`;
  return undefined;
}

/** The kinds of request a caller may be sent, named as the channel's flags name them. */
export type ToolInputKind = 'elicitation' | 'sampling' | 'roots';

const KIND_OF: Readonly<Record<ToolInputRequest['method'], ToolInputKind>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** The kinds of `needed`'s requests that `input` cannot answer (all of them without a channel), in a fixed order. */
export function unanswerableKinds(needed: ToolInputNeeded, input: ToolInputChannel | undefined): ToolInputKind[] {
  const can: Record<ToolInputKind, boolean> = {
    elicitation: input?.canAsk === true,
    sampling: input?.canSample === true,
    roots: input?.canListRoots === true,
  };
  const kinds = new Set(Object.values(needed.inputRequests).map((request) => KIND_OF[request.method]));
  return (['elicitation', 'sampling', 'roots'] as const).filter((kind) => kinds.has(kind) && !can[kind]);
}

/** The accepted form content of the answer under `key`, or undefined (missing, declined, cancelled, malformed). */
export function acceptedAnswer(input: ToolInputChannel | undefined, key: string): Record<string, unknown> | undefined {
  const answer = input?.responses[key] as { action?: unknown; content?: unknown } | undefined;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (typeof answer !== 'object' || answer === null || answer.action !== 'accept') return undefined;
  return typeof answer.content === 'object' && answer.content !== null && !Array.isArray(answer.content)
    ? (answer.content as Record<string, unknown>)
    : undefined;
}
