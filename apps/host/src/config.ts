import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { ModeCatalogChanges } from '@aptix/tool-mode-catalog';
import { parseApiKeys, splitKeyList, type ApiKey } from './api-keys.js';
import {
  DEFAULT_CANCEL_GRACE_MS,
  DEFAULT_MAX_ERROR_MESSAGE_LENGTH,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_TOOL_TIMEOUT_MS,
  DEFAULT_UNIT_TIMEOUT_MS,
} from '@aptix/tool-contract';
import { DEFAULT_STARTUP_TIMEOUT_MS, normaliseToolPackages, type ToolPackageConfig } from './tool-package-config.js';
import { ConfigError, type AptixConfigFile } from './config-file.js';
import { parseConfigFile } from './config-file-parse.js';
import { DEFAULT_HEAP_GROWTH_PERCENT } from './heap-policy.js';
import type { PrincipalEntry } from './permissions.js';
import { resolveOAuthConfig, type OAuthConfig } from './auth/oauth-config.js';
import { resolveAuditConfig, type AuditConfig } from './audit/audit-config.js';
import { resolveTelemetryConfig, type TelemetryConfig } from './telemetry/telemetry-config.js';

export { AptixConfigFile, ConfigError } from './config-file.js';
export { parseConfigFile } from './config-file-parse.js';

/** The first-party tool packages a host loads when the configuration names none. */
export const DEFAULT_TOOL_PACKAGES = [
  '@aptix/tool-samples',
  '@aptix/tool-mode-catalog',
  '@aptix/tool-mode-change',
] as const;

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
  readonly mcp: {
    readonly sessionIdleMs: number;
    readonly maxSessions: number;
    readonly requestStateKey: string | undefined;
    /** Resumable response streams of 2025-11-25 sessions: the retry asked of clients, and how long a connection is held. */
    readonly streamRetryMs: number;
    readonly streamHoldMs: number;
    /** Whether the HTTP fast lane serves plain tools/call and tools/list requests (see mcp/fast-lane.ts). */
    readonly fastLane: boolean;
    /** MCP tasks: how long a working task may go without a sign of its host before it is reported failed (its host stopped). */
    readonly taskStaleMs: number;
  };
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
  /** OpenTelemetry traces and metrics (telemetry/); undefined when off, the default. */
  readonly telemetry: TelemetryConfig | undefined;
  /** Modes offered through aptix_find_tools and aptix_call_tool instead of their tool list: every mode (true), these, or none (false). */
  readonly deferredModes: boolean | readonly string[];
  /** Prompts and resources added to modes, by mode key (`promptModes`, `resourceModes`). */
  readonly promptModes: Readonly<Record<string, readonly string[]>>;
  readonly resourceModes: Readonly<Record<string, readonly string[]>>;
  /** The time limit of one render, read or completion (`unitTimeoutMs`). */
  readonly unitTimeoutMs: number;
  /** How long a gated call waits for a decision. */
  readonly approvalTtlMs: number;
  /** Tools whose approvals the principal that asked may decide too (development only). */
  readonly allowSelfApproval: readonly string[];
  /** Permissions by API key name (see permissions.ts). */
  readonly principals: Readonly<Record<string, PrincipalEntry>>;
  /** The host as an OAuth 2.1 resource server (auth/resource-server.ts); undefined when it accepts API keys only. */
  readonly oauth: OAuthConfig | undefined;
  readonly approvalSweepIntervalMs: number;
  /** The audit trail: whether it is kept, what it records, its retention (docs/audit.md). */
  readonly audit: AuditConfig;
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
  /** `aptix serve`: how far the JS heap may grow past what it kept before a full collection, in percent; 0 leaves it to V8 (see heap-policy.ts). */
  readonly heapGrowthPercent: number;
  /** Where relative paths in the configuration are resolved from. */
  readonly baseDir: string;
  /** The file the configuration came from, if any. */
  readonly file: string | undefined;
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
      if (isNotFound(error))
        throw new ConfigError(
          `Config file ${path} does not exist. Fix: pass an existing file to --config, or omit --config to use the defaults.`,
        );
      throw error;
    }
  }
  const baseDir = source ? dirname(source) : cwd;

  const fromEnv = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const port = fromEnv('APTIX_PORT');
  const envPort = port === undefined ? undefined : parsePort(port, 'APTIX_PORT');
  const envPackages = fromEnv('APTIX_TOOL_PACKAGES')
    ?.split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const logLevel = fromEnv('LOG_LEVEL') ?? file.logLevel ?? options.defaultLogLevel ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(
      `LOG_LEVEL "${logLevel}" is not a log level. Fix: use one of fatal, error, warn, info, debug, trace, silent.`,
    );
  }
  const apiKeys = readApiKeys(fromEnv('APTIX_API_KEY'), fromEnv('APTIX_API_KEYS'), file, source);
  const requestTimeoutMs = file.requestTimeoutMs ?? 30_000;
  const headersTimeoutMs = file.headersTimeoutMs ?? Math.min(10_000, requestTimeoutMs);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `headersTimeoutMs (${headersTimeoutMs}) is longer than requestTimeoutMs (${requestTimeoutMs}), which already includes the headers. Fix: make headersTimeoutMs at most requestTimeoutMs.`,
    );
  }

  let toolPackages: ToolPackageConfig[];
  try {
    toolPackages = normaliseToolPackages(
      envPackages ?? file.toolPackages ?? [...DEFAULT_TOOL_PACKAGES],
      envPackages ? ' (in APTIX_TOOL_PACKAGES)' : source ? ` (in ${source})` : '',
    );
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const { catalog: fileCatalog, ...modeChanges } =
    typeof file.modes === 'object' ? file.modes : { catalog: file.modes };
  const modes = fromEnv('APTIX_MODES') ?? fileCatalog;
  return {
    host: unbracket(options.overrides?.host ?? fromEnv('APTIX_HOST') ?? file.host ?? '127.0.0.1'),
    port: options.overrides?.port ?? envPort ?? file.port ?? 8787,
    db: fromEnv('APTIX_DB') ?? file.db ?? 'sqlite:./.aptix/aptix.db',
    modes:
      modes === undefined
        ? undefined
        : isAbsolute(modes)
          ? modes
          : resolve(fromEnv('APTIX_MODES') ? cwd : baseDir, modes),
    modeChanges: Object.keys(modeChanges).length > 0 ? modeChanges : undefined,
    apiKeys,
    toolPackages,
    logLevel,
    bodyLimitBytes: file.bodyLimitBytes ?? 1024 * 1024,
    mcp: {
      sessionIdleMs:
        (positiveInt(fromEnv('APTIX_MCP_SESSION_IDLE_SECONDS'), 'APTIX_MCP_SESSION_IDLE_SECONDS') ??
          file.mcp?.sessionIdleSeconds ??
          1800) * 1000,
      maxSessions:
        positiveInt(fromEnv('APTIX_MCP_MAX_SESSIONS'), 'APTIX_MCP_MAX_SESSIONS') ?? file.mcp?.maxSessions ?? 10_000,
      requestStateKey: stateKey(fromEnv('APTIX_MCP_STATE_KEY')) ?? file.mcp?.requestStateKey,
      streamRetryMs: file.mcp?.streamRetryMs ?? 1000,
      streamHoldMs: file.mcp?.streamHoldMs ?? 0,
      fastLane: onOff(fromEnv('APTIX_MCP_FAST_LANE'), 'APTIX_MCP_FAST_LANE') ?? file.mcp?.fastLane ?? true,
      taskStaleMs: file.mcp?.taskStaleMs ?? 30_000,
    },
    sessions: file.sessions ?? {},
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: file.keepAliveTimeoutMs ?? 5_000,
    shutdownTimeoutMs: file.shutdownTimeoutMs ?? 10_000,
    readinessTimeoutMs: file.readinessTimeoutMs ?? 2_000,
    maxUrlLength: file.maxUrlLength ?? 4096,
    rateLimit:
      file.rateLimit === undefined
        ? undefined
        : { max: file.rateLimit.max, timeWindowMs: file.rateLimit.timeWindowMs ?? 60_000 },
    console: onOff(fromEnv('APTIX_CONSOLE'), 'APTIX_CONSOLE') ?? file.console ?? true,
    telemetry: resolveTelemetryConfig(file.telemetry, env, onOff),
    deferredModes: file.deferredModes ?? false,
    promptModes: file.promptModes ?? {},
    resourceModes: file.resourceModes ?? {},
    unitTimeoutMs: file.unitTimeoutMs ?? DEFAULT_UNIT_TIMEOUT_MS,
    approvalTtlMs: file.approvals?.ttlMs ?? 3_600_000,
    allowSelfApproval: file.approvals?.allowSelfApproval ?? [],
    principals: file.principals ?? {},
    oauth: readOAuth(file, source),
    approvalSweepIntervalMs: file.approvals?.sweepIntervalMs ?? 5_000,
    audit: resolveAuditConfig(file.audit, fromEnv('APTIX_AUDIT')),
    approvalOrphanAfterMs: file.approvals?.orphanAfterMs ?? 30_000,
    toolTimeoutMs: file.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    toolCancelGraceMs: file.toolCancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS,
    allowedHosts: file.allowedHosts ?? [],
    allowedOrigins: file.allowedOrigins ?? [],
    startupTimeoutMs: file.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
    maxResultBytes: file.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    maxErrorMessageLength: file.maxErrorMessageLength ?? DEFAULT_MAX_ERROR_MESSAGE_LENGTH,
    heapGrowthPercent:
      percentage(fromEnv('APTIX_HEAP_GROWTH_PERCENT'), 'APTIX_HEAP_GROWTH_PERCENT') ??
      file.heapGrowthPercent ??
      DEFAULT_HEAP_GROWTH_PERCENT,
    openai: {
      baseUrl: fromEnv('OPENAI_BASE_URL') ?? file.openai?.baseUrl,
      apiKey: fromEnv('OPENAI_API_KEY') ?? file.openai?.apiKey,
      model: fromEnv('APTIX_MODEL') ?? file.openai?.model,
    },
    baseDir,
    file: source,
  };
}

/** The file's `oauth` section, resolved; its errors name the file. */
function readOAuth(file: AptixConfigFile, source: string | undefined): OAuthConfig | undefined {
  if (file.oauth === undefined) return undefined;
  try {
    return resolveOAuthConfig(file.oauth);
  } catch (error) {
    throw new ConfigError(`Config file ${source ?? ''} is invalid: ${(error as Error).message}`);
  }
}

/** APTIX_API_KEY / APTIX_API_KEYS replace the file's apiKey / apiKeys; together they are the accepted keys. */
function readApiKeys(
  envKey: string | undefined,
  envKeys: string | undefined,
  file: AptixConfigFile,
  source: string | undefined,
): ApiKey[] {
  const single =
    envKey !== undefined
      ? { key: envKey, source: 'APTIX_API_KEY' }
      : file.apiKey !== undefined
        ? { key: file.apiKey, source: `apiKey in ${source}` }
        : undefined;
  const [entries, from] =
    envKeys !== undefined ? [splitKeyList(envKeys), 'APTIX_API_KEYS'] : [file.apiKeys, `apiKeys in ${source}`];
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
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`${name} "${value}" is not a TCP port. Fix: use a whole number from 0 to 65535.`);
  return port;
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** True for addresses that only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** A switch from the environment: on/true/1/yes or off/false/0/no, in any case; anything else is refused, never guessed. */
function onOff(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  const word = value.trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(word)) return true;
  if (['off', 'false', '0', 'no'].includes(word)) return false;
  throw new ConfigError(
    `${name} "${value.slice(0, 40)}" is neither on nor off. Fix: set it to on or off (true/false, 1/0 and yes/no also work), or unset it for the default.`,
  );
}

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new ConfigError(
      `${name} "${value}" is not a whole number of at least 1. Fix: set it to a positive whole number, or unset it for the default.`,
    );
  return parsed;
}

function percentage(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(parsed <= 1000))
    throw new ConfigError(
      `${name} "${value.slice(0, 40)}" is not a whole percentage from 0 to 1000. Fix: set it to a whole number (0 leaves the choice to V8), or unset it for the default.`,
    );
  return parsed;
}

/** APTIX_MCP_STATE_KEY: the requestState HMAC key; too short a key is refused at start-up, never weakened. */
function stateKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Buffer.byteLength(value) < 32)
    throw new ConfigError(
      `APTIX_MCP_STATE_KEY must be at least 32 bytes long (it is ${Buffer.byteLength(value)}): use a long random value, the same on every host, for example \`openssl rand -base64 48\`.`,
    );
  return value;
}
