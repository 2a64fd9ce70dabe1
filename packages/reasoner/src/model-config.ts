import OpenAI from 'openai';
import { ReasonerError, ReasonerErrorCode } from './reasoner-error.js';

/** OpenAI's own endpoint, used when no base URL is given. */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * Where the model lives. The host fills it from its configuration (`OPENAI_BASE_URL`, `OPENAI_API_KEY`,
 * `APTIX_MODEL`, or the config file's `openai` section); the Reasoner never reads the environment itself.
 */
export interface ModelConnection {
  /** Any OpenAI-compatible Responses endpoint (OpenAI, Azure, vLLM, Ollama…). Default: OpenAI's. */
  readonly baseURL?: string | undefined;
  /** Required for OpenAI's own endpoint; optional for local endpoints that check no key. */
  readonly apiKey?: string | undefined;
  /** The model name the endpoint serves, e.g. `gpt-4.1-mini`. Required. */
  readonly model?: string | undefined;
  /** Retries of a failed request (the SDK's default is 2). */
  readonly maxRetries?: number;
  /** Time-out of one model request in milliseconds (the SDK's default is 10 minutes). */
  readonly timeoutMs?: number;
}

/** A connection that passed {@link resolveModelConnection}. */
export interface ResolvedModelConnection {
  readonly baseURL: string;
  readonly apiKey: string;
  readonly model: string;
  readonly maxRetries: number | undefined;
  readonly timeoutMs: number | undefined;
}

/** Sent as the key to endpoints that check none: the SDK needs some string. */
const NO_KEY = 'no-key-configured';

/**
 * Checks a model connection and fills in the defaults. A host calls it at start-up (or `createReasoner`
 * does) so a missing model is reported before the first message, saying exactly what to set.
 *
 * @throws {ReasonerError} `MODEL_NOT_CONFIGURED`, `API_KEY_MISSING` or `INVALID_OPTION`.
 * @example
 * const connection = resolveModelConnection({ baseURL: config.openai.baseUrl, apiKey: config.openai.apiKey, model: config.openai.model });
 */
export function resolveModelConnection(connection: ModelConnection): ResolvedModelConnection {
  const model = connection.model?.trim();
  if (!model) {
    throw new ReasonerError(
      ReasonerErrorCode.MODEL_NOT_CONFIGURED,
      'No model is configured for the agent. Set APTIX_MODEL (or "openai.model" in aptix.config.json) to a model your endpoint serves, e.g. APTIX_MODEL=gpt-4.1-mini; ' +
        'for an endpoint other than OpenAI also set OPENAI_BASE_URL (e.g. http://localhost:11434/v1 for Ollama), and OPENAI_API_KEY when it needs a key.',
    );
  }
  const explicitBase = connection.baseURL?.trim();
  const baseURL = explicitBase || DEFAULT_OPENAI_BASE_URL;
  let parsed: URL;
  try {
    parsed = new URL(baseURL);
  } catch (cause) {
    throw new ReasonerError(
      ReasonerErrorCode.INVALID_OPTION,
      `OPENAI_BASE_URL "${baseURL}" is not a URL. Set it to the endpoint's base, e.g. https://api.openai.com/v1 or http://localhost:8000/v1.`,
      { cause },
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ReasonerError(
      ReasonerErrorCode.INVALID_OPTION,
      `OPENAI_BASE_URL "${baseURL}" must be an http:// or https:// URL, e.g. https://api.openai.com/v1.`,
    );
  }
  const apiKey = connection.apiKey?.trim();
  if (!apiKey && !explicitBase) {
    throw new ReasonerError(
      ReasonerErrorCode.API_KEY_MISSING,
      `Model "${model}" would be called on OpenAI's endpoint (${DEFAULT_OPENAI_BASE_URL}) without an API key. Set OPENAI_API_KEY (or "openai.apiKey" in aptix.config.json), ` +
        'or set OPENAI_BASE_URL to a local endpoint that needs no key.',
    );
  }
  const { maxRetries, timeoutMs } = connection;
  if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
    throw new ReasonerError(
      ReasonerErrorCode.INVALID_OPTION,
      `maxRetries must be a whole number of retries, 0 or more; got ${String(maxRetries)}.`,
    );
  }
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
    throw new ReasonerError(
      ReasonerErrorCode.INVALID_OPTION,
      `timeoutMs must be a positive whole number of milliseconds; got ${String(timeoutMs)}.`,
    );
  }
  return { baseURL, apiKey: apiKey || NO_KEY, model, maxRetries, timeoutMs };
}

/**
 * The official SDK client for a resolved connection. Every value is passed explicitly, so the SDK's own
 * fallbacks to `OPENAI_BASE_URL`/`OPENAI_API_KEY` in the environment never apply behind the host's back.
 */
export function createOpenAIClient(connection: ResolvedModelConnection): OpenAI {
  return new OpenAI({
    baseURL: connection.baseURL,
    apiKey: connection.apiKey,
    adminAPIKey: null,
    organization: null,
    project: null,
    ...(connection.maxRetries === undefined ? {} : { maxRetries: connection.maxRetries }),
    ...(connection.timeoutMs === undefined ? {} : { timeout: connection.timeoutMs }),
  });
}
