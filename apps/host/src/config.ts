import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { Type, type Static } from 'typebox';
import { Ajv } from 'ajv';
import { ModeCatalogChanges } from '@aptix/tool-mode-catalog';
import { parseApiKeys, splitKeyList, type ApiKey } from './api-keys.js';
import { DEFAULT_CANCEL_GRACE_MS, DEFAULT_MAX_ERROR_MESSAGE_LENGTH, DEFAULT_MAX_RESULT_BYTES, DEFAULT_TOOL_TIMEOUT_MS } from '@aptix/tool-contract';
import { DEFAULT_STARTUP_TIMEOUT_MS, normaliseToolPackages, ToolPackageEntry, type ToolPackageConfig } from './tool-package-config.js';

/** The first-party tool packages a host loads when the configuration names none. */
export const DEFAULT_TOOL_PACKAGES = ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change'] as const;

const LogLevel = Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)), {
  description: 'pino log level.',
});

/** `aptix.config.json`: every field optional; environment variables override the file. */
export const AptixConfigFile = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    host: Type.Optional(Type.String({ minLength: 1, description: 'Address to listen on. Without an apiKey only loopback is allowed.' })),
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, description: 'TCP port; 0 picks a free one.' })),
    db: Type.Optional(Type.String({ minLength: 1, description: 'Session store URL: sqlite:<path> or postgres://…' })),
    modes: Type.Optional(
      Type.Union([Type.String({ minLength: 1, description: 'Path of the mode catalog JSON file.' }), ModeCatalogChanges], {
        description: 'The mode catalog: a file path, or { catalog?, extend?, add? } to add tools and modes to the shipped catalog without copying it.',
      }),
    ),
    apiKey: Type.Optional(Type.String({ minLength: 16, description: 'Bearer key required on every route but /healthz, /readyz, /docs and /openapi.json. At least 16 characters.' })),
    apiKeys: Type.Optional(Type.Array(Type.String({ minLength: 16 }), { description: 'More accepted keys, each "<key>" or "<name>=<key>"; the name appears in logs. For rotation.' })),
    toolPackages: Type.Optional(Type.Array(ToolPackageEntry, { description: 'Tool packages by npm name or path, or { package, isolation, options, … }; replaces the default list.' })),
    logLevel: Type.Optional(LogLevel),
    bodyLimitBytes: Type.Optional(Type.Integer({ minimum: 1024, description: 'Largest request body accepted.' })),
    toolTimeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: 'Default time-out of a tool call.' })),
    mcp: Type.Optional(
      Type.Object(
        {
          sessionIdleSeconds: Type.Optional(Type.Integer({ minimum: 1, description: 'A 2025-era MCP session unused for this long is closed (default 1800).' })),
          maxSessions: Type.Optional(Type.Integer({ minimum: 1, description: 'Live 2025-era MCP sessions per host; a new one over the cap is refused with 503 (default 10000).' })),
        },
        { additionalProperties: false },
      ),
    ),
    sessions: Type.Optional(
      Type.Object(
        {
          maxReasonLength: Type.Optional(Type.Integer({ minimum: 1, description: 'Longest mode-change reason stored, in characters (default 1000).' })),
          maxKeyLength: Type.Optional(Type.Integer({ minimum: 1, description: 'Longest org, user, mode key or id stored, in characters (default 256).' })),
          historyPageSize: Type.Optional(Type.Integer({ minimum: 1, description: 'Mode-history rows per page when a read names no limit (default 100).' })),
          maxHistoryPageSize: Type.Optional(Type.Integer({ minimum: 1, description: 'Most mode-history rows one page may hold (default 1000).' })),
          sqliteBusyTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, description: "SQLite: how long a call waits for another process's lock, without blocking (default 5000)." })),
          postgres: Type.Optional(
            Type.Object(
              {
                connectionTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, description: 'Opening a connection to the server (default 5000).' })),
                statementTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, description: 'statement_timeout (default 10000).' })),
                lockTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, description: 'lock_timeout: a wait for a locked session (default 5000).' })),
                queryTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, description: 'Longest wait for any answer from the server, or for a free pooled connection (default 15000).' })),
                idleInTransactionTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, description: 'idle_in_transaction_session_timeout (default 60000).' })),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false, description: 'Session store bounds and time-outs; see docs/hosting.md.' },
      ),
    ),
    requestTimeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: 'Longest time a client may take to send a whole request (headers and body); then 408 and the connection closes.' })),
    headersTimeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: "Longest time a client may take to send a request's headers. At most requestTimeoutMs." })),
    keepAliveTimeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: 'How long an idle keep-alive connection stays open.' })),
    shutdownTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, description: 'On SIGTERM, how long calls in flight may finish before every connection is closed.' })),
    readinessTimeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: 'How long /readyz waits for the session store before answering 503.' })),
    maxUrlLength: Type.Optional(Type.Integer({ minimum: 64, description: 'Longest request URL, query included; longer ones get 414.' })),
    rateLimit: Type.Optional(
      Type.Object(
        {
          max: Type.Integer({ minimum: 1, description: 'Requests each client may make per window.' }),
          timeWindowMs: Type.Optional(Type.Integer({ minimum: 1, description: 'The window, in milliseconds (default 60000).' })),
        },
        { additionalProperties: false, description: 'Per-client rate limit, keyed by API key name (or address without a key). Off when absent.' },
      ),
    ),
    console: Type.Optional(Type.Boolean({ description: 'Serve the web console at /console (default true; APTIX_CONSOLE=off switches it off).' })),
    approvals: Type.Optional(
      Type.Object(
        {
          ttlMs: Type.Optional(Type.Integer({ minimum: 1000, description: 'How long a person has to decide a gated call (default one hour).' })),
          sweepIntervalMs: Type.Optional(Type.Integer({ minimum: 100, description: 'How often a serving host expires undecided approvals and picks up what a stopped host left (default 5 s).' })),
          orphanAfterMs: Type.Optional(Type.Integer({ minimum: 100, description: 'An approved call that no host started this long after its decision is run by the sweep (default 30 s).' })),
        },
        { additionalProperties: false },
      ),
    ),
    toolCancelGraceMs: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 60_000, description: 'After a cancellation or a time-out, how long a call waits for the tool to stop before it answers OUTCOME_UNKNOWN.' }),
    ),
    allowedHosts: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Extra Host header values to accept (e.g. a public name behind a proxy).' })),
    allowedOrigins: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Extra Origin header values to accept.' })),
    // Fault isolation (issue 14): start-up time limits and the bounds on what a tool may answer.
    startupTimeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: "Each tool package's time limit for its import, and for its createDependencies and createTools (default 10000)." })),
    maxResultBytes: Type.Optional(Type.Integer({ minimum: 1024, description: "Largest result a tool may return, in UTF-8 bytes (default 1 MiB); larger is RESULT_TOO_LARGE." })),
    maxErrorMessageLength: Type.Optional(Type.Integer({ minimum: 64, description: 'Longest error message a tool may return, in characters (default 8192); longer ones are cut.' })),
    openai: Type.Optional(
      Type.Object(
        {
          baseUrl: Type.Optional(Type.String({ minLength: 1 })),
          apiKey: Type.Optional(Type.String({ minLength: 1 })),
          model: Type.Optional(Type.String({ minLength: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type AptixConfigFile = Static<typeof AptixConfigFile>;

/** The resolved configuration a host runs with. */
export interface AptixConfig {
  readonly host: string;
  readonly port: number;
  readonly db: string;
  /** Path of the mode catalog, or undefined for the catalog shipped with @aptix/tool-mode-catalog. */
  readonly modes: string | undefined;
  /** Tools added to the catalog's modes, and modes added to it (`modes: { extend, add }` in the file). */
  readonly modeChanges: Omit<ModeCatalogChanges, 'catalog'> | undefined;
  /** The accepted API keys; empty when the host needs none. */
  readonly apiKeys: readonly ApiKey[];
  readonly toolPackages: readonly ToolPackageConfig[];
  readonly logLevel: string;
  readonly bodyLimitBytes: number;
  readonly toolTimeoutMs: number;
  /** 2025-era MCP sessions: idle time-out and the cap on live sessions per host. */
  readonly mcp: { readonly sessionIdleMs: number; readonly maxSessions: number };
  /** The `sessions` section of the file, as given: bounds and time-outs of the session store (its defaults apply to what is unset). */
  readonly sessions: NonNullable<AptixConfigFile['sessions']>;
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  readonly readinessTimeoutMs: number;
  readonly maxUrlLength: number;
  /** Per-client rate limit; undefined when off. */
  readonly rateLimit: { readonly max: number; readonly timeWindowMs: number } | undefined;
  /** Whether the web console is served at /console. */
  readonly console: boolean;
  /** How long a gated call waits for a decision. */
  readonly approvalTtlMs: number;
  readonly approvalSweepIntervalMs: number;
  readonly approvalOrphanAfterMs: number;
  /** After a cancellation or a time-out, how long a call waits for its tool to settle (see docs/tool-packages.md). */
  readonly toolCancelGraceMs: number;
  readonly allowedHosts: readonly string[];
  readonly allowedOrigins: readonly string[];
  readonly openai: { readonly baseUrl?: string; readonly apiKey?: string; readonly model?: string };
  // Fault isolation (issue 14).
  readonly startupTimeoutMs: number;
  readonly maxResultBytes: number;
  readonly maxErrorMessageLength: number;
  /** Where relative paths in the configuration are resolved from. */
  readonly baseDir: string;
  /** The file the configuration came from, if any. */
  readonly file: string | undefined;
}

/** A configuration that cannot be used; the message names the file, the field and the fix. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export interface LoadConfigOptions {
  /** `--config <file>`; when omitted, `./aptix.config.json` is used if it exists. */
  readonly file?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Command-line overrides (`--host`, `--port`), applied last. */
  readonly overrides?: { readonly host?: string; readonly port?: number };
  /** The log level when neither LOG_LEVEL nor the file sets one (`info` for servers, `warn` for one-shot commands). */
  readonly defaultLogLevel?: string;
}

/**
 * Reads the configuration: defaults, then `aptix.config.json`, then the environment
 * (`APTIX_HOST`, `APTIX_PORT`, `APTIX_DB`, `APTIX_MODES`, `APTIX_API_KEY`, `APTIX_API_KEYS`, `APTIX_TOOL_PACKAGES`,
 * `LOG_LEVEL`, `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `APTIX_MODEL`), then command-line flags.
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<AptixConfig> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const explicit = options.file ?? env.APTIX_CONFIG;
  const path = explicit === undefined ? resolve(cwd, 'aptix.config.json') : resolve(cwd, explicit);
  let file: AptixConfigFile = {};
  let source: string | undefined;
  try {
    file = parseConfigFile(await readFile(path, 'utf8'), path);
    source = path;
  } catch (error) {
    if (!(isNotFound(error) && explicit === undefined)) {
      if (isNotFound(error)) throw new ConfigError(`Config file ${path} does not exist. Fix: pass an existing file to --config, or omit --config to use the defaults.`);
      throw error;
    }
  }
  const baseDir = source ? dirname(source) : cwd;

  const fromEnv = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const port = fromEnv('APTIX_PORT');
  const envPort = port === undefined ? undefined : parsePort(port, 'APTIX_PORT');
  const envPackages = fromEnv('APTIX_TOOL_PACKAGES')?.split(',').map((entry) => entry.trim()).filter(Boolean);
  const logLevel = fromEnv('LOG_LEVEL') ?? file.logLevel ?? options.defaultLogLevel ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL "${logLevel}" is not a log level. Fix: use one of fatal, error, warn, info, debug, trace, silent.`);
  }
  const apiKeys = readApiKeys(fromEnv('APTIX_API_KEY'), fromEnv('APTIX_API_KEYS'), file, source);
  const requestTimeoutMs = file.requestTimeoutMs ?? 30_000;
  const headersTimeoutMs = file.headersTimeoutMs ?? Math.min(10_000, requestTimeoutMs);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`headersTimeoutMs (${headersTimeoutMs}) is longer than requestTimeoutMs (${requestTimeoutMs}), which already includes the headers. Fix: make headersTimeoutMs at most requestTimeoutMs.`);
  }

  let toolPackages: ToolPackageConfig[];
  try {
    toolPackages = normaliseToolPackages(envPackages ?? file.toolPackages ?? [...DEFAULT_TOOL_PACKAGES], envPackages ? ' (in APTIX_TOOL_PACKAGES)' : source ? ` (in ${source})` : '');
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const { catalog: fileCatalog, ...modeChanges } = typeof file.modes === 'object' ? file.modes : { catalog: file.modes };
  const modes = fromEnv('APTIX_MODES') ?? fileCatalog;
  return {
    host: unbracket(options.overrides?.host ?? fromEnv('APTIX_HOST') ?? file.host ?? '127.0.0.1'),
    port: options.overrides?.port ?? envPort ?? file.port ?? 8787,
    db: fromEnv('APTIX_DB') ?? file.db ?? 'sqlite:./.aptix/aptix.db',
    modes: modes === undefined ? undefined : isAbsolute(modes) ? modes : resolve(fromEnv('APTIX_MODES') ? cwd : baseDir, modes),
    modeChanges: Object.keys(modeChanges).length > 0 ? modeChanges : undefined,
    apiKeys,
    toolPackages,
    logLevel,
    bodyLimitBytes: file.bodyLimitBytes ?? 1024 * 1024,
    mcp: {
      sessionIdleMs: (positiveInt(fromEnv('APTIX_MCP_SESSION_IDLE_SECONDS'), 'APTIX_MCP_SESSION_IDLE_SECONDS') ?? file.mcp?.sessionIdleSeconds ?? 1800) * 1000,
      maxSessions: positiveInt(fromEnv('APTIX_MCP_MAX_SESSIONS'), 'APTIX_MCP_MAX_SESSIONS') ?? file.mcp?.maxSessions ?? 10_000,
    },
    sessions: file.sessions ?? {},
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: file.keepAliveTimeoutMs ?? 5_000,
    shutdownTimeoutMs: file.shutdownTimeoutMs ?? 10_000,
    readinessTimeoutMs: file.readinessTimeoutMs ?? 2_000,
    maxUrlLength: file.maxUrlLength ?? 4096,
    rateLimit: file.rateLimit === undefined ? undefined : { max: file.rateLimit.max, timeWindowMs: file.rateLimit.timeWindowMs ?? 60_000 },
    console: fromEnv('APTIX_CONSOLE') === undefined ? (file.console ?? true) : !['off', 'false', '0', 'no'].includes(fromEnv('APTIX_CONSOLE')!.toLowerCase()),
    approvalTtlMs: file.approvals?.ttlMs ?? 3_600_000,
    approvalSweepIntervalMs: file.approvals?.sweepIntervalMs ?? 5_000,
    approvalOrphanAfterMs: file.approvals?.orphanAfterMs ?? 30_000,
    toolTimeoutMs: file.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    toolCancelGraceMs: file.toolCancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS,
    allowedHosts: file.allowedHosts ?? [],
    allowedOrigins: file.allowedOrigins ?? [],
    startupTimeoutMs: file.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
    maxResultBytes: file.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    maxErrorMessageLength: file.maxErrorMessageLength ?? DEFAULT_MAX_ERROR_MESSAGE_LENGTH,
    openai: {
      baseUrl: fromEnv('OPENAI_BASE_URL') ?? file.openai?.baseUrl,
      apiKey: fromEnv('OPENAI_API_KEY') ?? file.openai?.apiKey,
      model: fromEnv('APTIX_MODEL') ?? file.openai?.model,
    },
    baseDir,
    file: source,
  };
}

let validateFile: ReturnType<Ajv['compile']> | undefined;

/** Parses and validates the text of a config file; errors name the file and the field. */
export function parseConfigFile(text: string, path: string): AptixConfigFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`Config file ${path} is not valid JSON: ${(error as Error).message}.`);
  }
  validateFile ??= new Ajv({ allErrors: true, strict: false }).compile(AptixConfigFile);
  if (!validateFile(data)) {
    const problems = (validateFile.errors ?? []).map((error) => {
      const field = error.instancePath.slice(1).replace(/\//g, '.') || '(root)';
      if (error.keyword === 'additionalProperties') return `unknown field "${String(error.params.additionalProperty)}"${field === '(root)' ? '' : ` in ${field}`}`;
      return `${field} ${error.message ?? 'is invalid'}`;
    });
    throw new ConfigError(`Config file ${path} is invalid: ${problems.join('; ')}. Fix these fields; the fields and their meaning are in the host's README.`);
  }
  return data as AptixConfigFile;
}

/** APTIX_API_KEY / APTIX_API_KEYS replace the file's apiKey / apiKeys; together they are the accepted keys. */
function readApiKeys(envKey: string | undefined, envKeys: string | undefined, file: AptixConfigFile, source: string | undefined): ApiKey[] {
  const single = envKey !== undefined ? { key: envKey, source: 'APTIX_API_KEY' } : file.apiKey !== undefined ? { key: file.apiKey, source: `apiKey in ${source}` } : undefined;
  const [entries, from] = envKeys !== undefined ? [splitKeyList(envKeys), 'APTIX_API_KEYS'] : [file.apiKeys ?? [], `apiKeys in ${source}`];
  try {
    return parseApiKeys(single, entries, from);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/** `[::1]` (as in a URL) listens on `::1`. */
function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function parsePort(value: string, name: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`${name} "${value}" is not a TCP port. Fix: use a whole number from 0 to 65535.`);
  return port;
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** True for addresses that only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new ConfigError(`${name} "${value}" is not a whole number of at least 1. Fix: set it to a positive whole number, or unset it for the default.`);
  return parsed;
}
