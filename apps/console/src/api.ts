/** The host's HTTP API, as the console calls it: same origin, with the API key the operator gave, if any. */

const KEY = 'aptix.console.apiKey';

/** The API key lives only in this browser tab (sessionStorage), never in a cookie or localStorage. */
export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY),
  set: (key: string) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();
/** Called when the host answers 401: the console then asks for the key. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function headers(extra: Record<string, string> = {}): Record<string, string> {
  const key = apiKey.get();
  return { ...extra, ...(key ? { authorization: `Bearer ${key}` } : {}) };
}

/** Calls the API; a non-2xx answer throws an ApiError with the host's code and message. */
export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: T }> {
  const response = await fetch(path, {
    method: init.method ?? 'GET',
    headers: headers(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  let body: unknown = undefined;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  if (!response.ok) {
    if (response.status === 401) for (const listener of unauthorizedListeners) listener();
    const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      error?.message ?? `The host answered ${response.status}.`,
      body,
    );
  }
  return { status: response.status, body: body as T };
}

export interface ToolSummary {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

export interface ToolDetail {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly usageMetadata: string;
  readonly strict: boolean;
  readonly strictReport: { readonly declared: boolean; readonly problems: readonly string[] };
  readonly annotations: Record<string, boolean>;
  readonly approval: 'always' | 'never' | 'dynamic';
  readonly package: string | null;
}

export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly properties?: Record<string, JsonSchema>;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly JsonSchema[];
  readonly items?: JsonSchema;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: unknown;
}

export interface ModeView {
  readonly key: string;
  readonly displayName: string;
  readonly description: string;
  readonly systemPromptSummary?: string;
  readonly tools?: readonly string[];
  readonly [field: string]: unknown;
}

export interface PackageView {
  readonly name: string;
  readonly version: string | null;
  readonly tools: readonly string[];
}

export interface InvokeResult {
  readonly successful: boolean;
  readonly result: unknown;
  readonly errors: ReadonlyArray<{ message: string; code?: string }>;
}

export interface Approval {
  readonly id: string;
  readonly sessionId: string | null;
  readonly toolName: string;
  readonly arguments: unknown;
  readonly reason: string;
  readonly requestedBy: string | null;
  readonly requestedAt: string;
  readonly expiresAt: string;
  readonly status: string;
  readonly decidedBy: string | null;
  readonly note: string | null;
  readonly result: InvokeResult | null;
}

export interface SessionPage {
  readonly id: string;
  readonly mode: string;
  readonly history: ReadonlyArray<{ fromMode: string; toMode: string; reason: string; branch: boolean; at: string }>;
  readonly nextCursor?: string | null;
}

/** Reads a server-sent-event stream: each `event:`/`data:` frame, parsed. */
export async function* serverSentEvents(response: Response): AsyncGenerator<{ event: string; data: unknown }> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      for (const line of frame.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      try {
        yield { event, data: JSON.parse(data) as unknown };
      } catch {
        yield { event, data };
      }
    }
  }
}

/** `GET /v1/principal`: who the console is signed in as, and what that principal may do. */
export interface PrincipalView {
  /** The API key's name, `oauth:<subject>` for a token, or null on a host without keys. */
  readonly principal: string | null;
  readonly via: 'apiKey' | 'oauth' | 'none';
  readonly scopes?: readonly string[];
  readonly tools: readonly string[];
  readonly modes: readonly string[];
  readonly approve: readonly string[];
  readonly admin: boolean;
  readonly sessions: 'own' | 'all';
}
