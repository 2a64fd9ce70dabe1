import { Type, type Static } from 'typebox';
import { ModeCatalogChanges } from '@aptix/tool-mode-catalog';
import { ToolPackageEntry } from './tool-package-config.js';
import { AuditConfigFile } from './audit/audit-config-schema.js';
import { PrincipalPermissions } from './auth/permissions-schema.js';
import { OAuthConfigFile } from './auth/oauth-config.js';
import { TelemetryConfigFile } from './telemetry/telemetry-config.js';

// The shape of `aptix.config.json` and its validation; config.ts resolves it against the environment.

/** A configuration that cannot be used; the message names the file, the field and the fix. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const LogLevel = Type.Union(
  ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
  {
    description: 'pino log level.',
  },
);

/** `aptix.config.json`: every field optional; environment variables override the file. */
export const AptixConfigFile = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    host: Type.Optional(
      Type.String({ minLength: 1, description: 'Address to listen on. Without an apiKey only loopback is allowed.' }),
    ),
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, description: 'TCP port; 0 picks a free one.' })),
    db: Type.Optional(Type.String({ minLength: 1, description: 'Session store URL: sqlite:<path> or postgres://…' })),
    modes: Type.Optional(
      Type.Union(
        [Type.String({ minLength: 1, description: 'Path of the mode catalog JSON file.' }), ModeCatalogChanges],
        {
          description:
            'The mode catalog: a file path, or { catalog?, extend?, add? } to add tools and modes to the shipped catalog without copying it.',
        },
      ),
    ),
    apiKey: Type.Optional(
      Type.String({
        minLength: 16,
        description:
          'Bearer key required on every route but /healthz, /readyz, /docs and /openapi.json. At least 16 characters.',
      }),
    ),
    apiKeys: Type.Optional(
      Type.Array(Type.String({ minLength: 16 }), {
        description: 'More accepted keys, each "<key>" or "<name>=<key>"; the name appears in logs. For rotation.',
      }),
    ),
    toolPackages: Type.Optional(
      Type.Array(ToolPackageEntry, {
        description:
          'Tool packages by npm name or path, or { package, isolation, options, … }; replaces the default list.',
      }),
    ),
    logLevel: Type.Optional(LogLevel),
    bodyLimitBytes: Type.Optional(Type.Integer({ minimum: 1024, description: 'Largest request body accepted.' })),
    toolTimeoutMs: Type.Optional(Type.Integer({ minimum: 1, description: 'Default time-out of a tool call.' })),
    heapGrowthPercent: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1000,
        description:
          'aptix serve: how far the JS heap may grow past what the last full collection kept, in percent (default 50; 0 leaves it to V8, which grows it up to 300 % and keeps it after a burst).',
      }),
    ),
    mcp: Type.Optional(
      Type.Object(
        {
          sessionIdleSeconds: Type.Optional(
            Type.Integer({
              minimum: 1,
              description: 'A 2025-era MCP session unused for this long is closed (default 1800).',
            }),
          ),
          maxSessions: Type.Optional(
            Type.Integer({
              minimum: 1,
              description:
                'Live 2025-era MCP sessions per host; a new one over the cap is refused with 503 (default 10000).',
            }),
          ),
          fastLane: Type.Optional(
            Type.Boolean({
              description:
                'Serve plain tools/call and tools/list requests over HTTP without building an SDK server per request (default true). false sends every request through the SDK.',
            }),
          ),
          streamRetryMs: Type.Optional(
            Type.Integer({
              minimum: 0,
              maximum: 600_000,
              description:
                '2025-11-25 sessions: the retry a response stream asks clients to wait before they resume it (default 1000).',
            }),
          ),
          streamHoldMs: Type.Optional(
            Type.Integer({
              minimum: 0,
              description:
                '2025-11-25 sessions: close a response stream whose call runs longer than this, so proxies never cut it; the client resumes it (default 0: never).',
            }),
          ),
          taskStaleMs: Type.Optional(
            Type.Integer({
              minimum: 1000,
              maximum: 3_600_000,
              description:
                'MCP tasks: a working task whose host has not marked it alive for this long is reported ' +
                'failed, its outcome unknown (its host stopped). Hosts mark their tasks alive every second ' +
                '(default 30000).',
            }),
          ),
          requestStateKey: Type.Optional(
            Type.String({
              minLength: 32,
              description:
                'HMAC key sealing the 2026-07-28 requestState (at least 32 characters; APTIX_MCP_STATE_KEY). Every host behind one URL needs the same key. Default: a key drawn per process.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    sessions: Type.Optional(
      Type.Object(
        {
          maxReasonLength: Type.Optional(
            Type.Integer({
              minimum: 1,
              description: 'Longest mode-change reason stored, in characters (default 1000).',
            }),
          ),
          maxKeyLength: Type.Optional(
            Type.Integer({
              minimum: 1,
              description: 'Longest org, user, mode key or id stored, in characters (default 256).',
            }),
          ),
          historyPageSize: Type.Optional(
            Type.Integer({
              minimum: 1,
              description: 'Mode-history rows per page when a read names no limit (default 100).',
            }),
          ),
          maxHistoryPageSize: Type.Optional(
            Type.Integer({ minimum: 1, description: 'Most mode-history rows one page may hold (default 1000).' }),
          ),
          sqliteBusyTimeoutMs: Type.Optional(
            Type.Integer({
              minimum: 0,
              description: "SQLite: how long a call waits for another process's lock, without blocking (default 5000).",
            }),
          ),
          sqliteAuditWriter: Type.Optional(
            Type.Union([Type.Literal('worker'), Type.Literal('inline')], {
              description:
                "SQLite: where audit batches are written: on a worker thread of their own (worker, the default) or on the store's connection, holding the event loop (inline).",
            }),
          ),
          postgres: Type.Optional(
            Type.Object(
              {
                connectionTimeoutMs: Type.Optional(
                  Type.Integer({ minimum: 0, description: 'Opening a connection to the server (default 5000).' }),
                ),
                statementTimeoutMs: Type.Optional(
                  Type.Integer({ minimum: 0, description: 'statement_timeout (default 10000).' }),
                ),
                lockTimeoutMs: Type.Optional(
                  Type.Integer({
                    minimum: 0,
                    description: 'lock_timeout: a wait for a locked session (default 5000).',
                  }),
                ),
                queryTimeoutMs: Type.Optional(
                  Type.Integer({
                    minimum: 0,
                    description:
                      'Longest wait for any answer from the server, or for a free pooled connection (default 15000).',
                  }),
                ),
                idleInTransactionTimeoutMs: Type.Optional(
                  Type.Integer({ minimum: 0, description: 'idle_in_transaction_session_timeout (default 60000).' }),
                ),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false, description: 'Session store bounds and time-outs; see docs/hosting.md.' },
      ),
    ),
    requestTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Longest time a client may take to send a whole request (headers and body); then 408 and the connection closes.',
      }),
    ),
    headersTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "Longest time a client may take to send a request's headers. At most requestTimeoutMs.",
      }),
    ),
    keepAliveTimeoutMs: Type.Optional(
      Type.Integer({ minimum: 1, description: 'How long an idle keep-alive connection stays open.' }),
    ),
    shutdownTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'On SIGTERM, how long calls in flight may finish before every connection is closed.',
      }),
    ),
    readinessTimeoutMs: Type.Optional(
      Type.Integer({ minimum: 1, description: 'How long /readyz waits for the session store before answering 503.' }),
    ),
    maxUrlLength: Type.Optional(
      Type.Integer({ minimum: 64, description: 'Longest request URL, query included; longer ones get 414.' }),
    ),
    rateLimit: Type.Optional(
      Type.Object(
        {
          max: Type.Integer({ minimum: 1, description: 'Requests each client may make per window.' }),
          timeWindowMs: Type.Optional(
            Type.Integer({ minimum: 1, description: 'The window, in milliseconds (default 60000).' }),
          ),
        },
        {
          additionalProperties: false,
          description: 'Per-client rate limit, keyed by API key name (or address without a key). Off when absent.',
        },
      ),
    ),
    telemetry: Type.Optional(TelemetryConfigFile),
    console: Type.Optional(
      Type.Boolean({
        description: 'Serve the web console at /console (default true; APTIX_CONSOLE=off switches it off).',
      }),
    ),
    principals: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }), PrincipalPermissions, {
        description:
          'Permissions by API key name (the name of "<name>=<key>"). A key without an entry may do everything but decide an approval it asked for.',
      }),
    ),
    oauth: Type.Optional(OAuthConfigFile),
    promptModes: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^[a-z][a-z0-9]*(_[a-z0-9]+)*$' }),
        Type.Array(Type.String({ minLength: 1 })),
        {
          description:
            'Prompts added to modes, by mode key: { "general": ["acme_summarize"] }. A prompt is seen in the modes it declares and those named here, or in every mode when neither names one.',
        },
      ),
    ),
    unitTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        description:
          "How long a prompt's render, a resource's read or a completion may take, in milliseconds (default 10 s); past it the request fails with TIMEOUT.",
      }),
    ),
    resourceModes: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^[a-z][a-z0-9]*(_[a-z0-9]+)*$' }),
        Type.Array(Type.String({ minLength: 1 })),
        {
          description:
            'Resources added to modes, by mode key and resource name: { "general": ["acme_user"] }. A ' +
            'resource is seen in the modes it declares and those named here, or in every mode when ' +
            'neither names one.',
        },
      ),
    ),
    deferredModes: Type.Optional(
      Type.Union([Type.Boolean(), Type.Array(Type.String({ minLength: 1 }))], {
        description:
          'Modes offered through aptix_find_tools and aptix_call_tool instead of their whole tool ' +
          'list, for modes too large to list: true for every mode, or the mode keys (default false). ' +
          'MCP lists such a mode as its mode tools and the pair; the agent loop sends the model the same.',
      }),
    ),
    audit: Type.Optional(AuditConfigFile),
    approvals: Type.Optional(
      Type.Object(
        {
          ttlMs: Type.Optional(
            Type.Integer({
              minimum: 1000,
              description: 'How long a person has to decide a gated call (default one hour).',
            }),
          ),
          sweepIntervalMs: Type.Optional(
            Type.Integer({
              minimum: 100,
              description:
                'How often a serving host expires undecided approvals and picks up what a stopped host left (default 5 s).',
            }),
          ),
          orphanAfterMs: Type.Optional(
            Type.Integer({
              minimum: 100,
              description:
                'An approved call that no host started this long after its decision is run by the sweep (default 30 s).',
            }),
          ),
          allowSelfApproval: Type.Optional(
            Type.Array(Type.String({ minLength: 1 }), {
              description:
                'Tools (names, * patterns) whose approvals the principal that asked may decide too. For development only: by default the principal that asked for a gated call can never decide it.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    toolCancelGraceMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 60_000,
        description:
          'After a cancellation or a time-out, how long a call waits for the tool to stop before it answers OUTCOME_UNKNOWN.',
      }),
    ),
    allowedHosts: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'Extra Host header values to accept (e.g. a public name behind a proxy).',
      }),
    ),
    allowedOrigins: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { description: 'Extra Origin header values to accept.' }),
    ),
    // Fault isolation (issue 14): start-up time limits and the bounds on what a tool may answer.
    startupTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "Each tool package's time limit for its import, and for its createDependencies and createTools (default 10000).",
      }),
    ),
    maxResultBytes: Type.Optional(
      Type.Integer({
        minimum: 1024,
        description: 'Largest result a tool may return, in UTF-8 bytes (default 1 MiB); larger is RESULT_TOO_LARGE.',
      }),
    ),
    maxErrorMessageLength: Type.Optional(
      Type.Integer({
        minimum: 64,
        description: 'Longest error message a tool may return, in characters (default 8192); longer ones are cut.',
      }),
    ),
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
