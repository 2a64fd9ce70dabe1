import { Type, type Static } from 'typebox';
import { validateArguments, type JsonSchema } from '@aptix/tool-contract';
import { McpBridgeError } from './codes.js';

const SNAKE = '^[a-z0-9]+(_[a-z0-9]+)*$';

/** A value read from the host's environment when the bridge connects: `{ env: 'X_TOKEN', prefix: 'Bearer ' }`. */
const FromEnv = Type.Object(
  {
    env: Type.String({
      pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
      description: 'Name of the environment variable holding the value.',
    }),
    prefix: Type.Optional(Type.String({ description: 'Text put before the value, e.g. "Bearer ".' })),
  },
  { additionalProperties: false },
);
export type FromEnv = Static<typeof FromEnv>;
const Value = Type.Union([Type.String(), FromEnv]);

const Stdio = Type.Object(
  {
    command: Type.String({ minLength: 1, description: 'The program that starts the server.' }),
    args: Type.Optional(Type.Array(Type.String(), { description: 'Its arguments.' })),
    env: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Value, {
        additionalProperties: false,
        description:
          'Environment of the server, on top of a safe default set (PATH, HOME…); never the whole host environment.',
      }),
    ),
    cwd: Type.Optional(
      Type.String({
        minLength: 1,
        description: "Working directory; relative to the host process's working directory.",
      }),
    ),
  },
  { additionalProperties: false },
);

const Http = Type.Object(
  {
    url: Type.String({
      pattern: '^https?://',
      description: 'The Streamable HTTP endpoint, e.g. https://mcp.example.com/mcp.',
    }),
    headers: Type.Optional(
      Type.Record(Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$" }), Value, {
        additionalProperties: false,
        description: 'Headers sent on every request; credentials only as { env }.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The options of one bridged MCP server, as a host's `toolPackages` entry gives them. */
export const McpBridgeOptionsSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, description: "The server's name in messages and logs." }),
    prefix: Type.Optional(
      Type.String({
        pattern: SNAKE,
        maxLength: 32,
        description: 'Put before every tool name; default: the name in snake_case.',
      }),
    ),
    stdio: Type.Optional(Stdio),
    http: Type.Optional(Http),
    protocol: Type.Optional(
      Type.Union([Type.Literal('auto'), Type.Literal('legacy'), Type.Literal('2026-07-28')], {
        description: 'auto (default) probes for 2026-07-28 and falls back to the 2025 handshake.',
      }),
    ),
    timeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        description: "Time-out of each bridged tool (its TimeoutMs); default the host's.",
      }),
    ),
    connectTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 600_000,
        description: 'How long connecting, and then listing the tools, may each take. Default 5 000.',
      }),
    ),
    include: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { description: 'Only these remote tools (by their remote names).' }),
    ),
    exclude: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Never these remote tools.' })),
    rename: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), Type.String({ pattern: SNAKE, maxLength: 64 }), {
        additionalProperties: false,
        description: 'Remote name → full Aptix name (no prefix added).',
      }),
    ),
    modes: Type.Optional(
      Type.Array(Type.String({ pattern: SNAKE }), {
        description:
          'The modes whose sessions offer the bridged tools (each tool class declares them as its static Modes).',
      }),
    ),
    maxTools: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10_000,
        description:
          'The most tools offered from this server (default 1 000); past it, the rest are left out with one logged line. Tools already offered keep their place.',
      }),
    ),
    approval: Type.Optional(
      Type.Union(
        [
          Type.Literal('none'),
          Type.Literal('all'),
          Type.Literal('destructive'),
          Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
        ],
        {
          description:
            "Which bridged tools wait for a person's approval before each call (ApprovalPolicy " +
            '"always"): "none" (the default), "all", "destructive" (every tool the server does not ' +
            'declare read-only, unless it declares destructiveHint: false, as MCP reads its ' +
            'annotations), or a list of remote tool names.',
        },
      ),
    ),
    invalidTools: Type.Optional(
      Type.Union([Type.Literal('skip'), Type.Literal('fail')], {
        description:
          'A remote tool that cannot be made to meet the contract: skip it with a logged reason (default), or stop start-up.',
      }),
    ),
    reconnect: Type.Optional(
      Type.Object(
        {
          initialDelayMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
          maxDelayMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type McpBridgeOptions = Static<typeof McpBridgeOptionsSchema>;

/** Header names whose values are credentials: they may only come from the environment. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie)$|token|secret|key|password|auth|session/i;
/** Environment names that look like credentials. */
const SECRET_ENV = /token|secret|password|passwd|api_?key|credential|private/i;

/**
 * Checks a host's options for the bridge, with messages that name the server, the field and the fix.
 * Credentials written into the file (a literal `Authorization` header, a literal `*_TOKEN`) are refused.
 */
export function parseBridgeOptions(value: unknown): McpBridgeOptions {
  if (value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0)) {
    throw new McpBridgeError(
      '@aptix/tool-mcp-bridge needs options: the MCP server to bridge. Fix: give the ' +
        'toolPackages entry { "package": "@aptix/tool-mcp-bridge", "options": { "name": "…", ' +
        '"stdio": { "command": "…" } } } or options.http.url.',
    );
  }
  const label =
    typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string'
      ? `MCP server "${(value as { name: string }).name}"`
      : 'an MCP server';
  const checked = validateArguments<McpBridgeOptions>(
    'bridge options',
    McpBridgeOptionsSchema as unknown as JsonSchema,
    structuredClone(value),
  );
  if (!checked.ok) {
    const problems = checked.issues.map((issue) =>
      issue.path === '(arguments)' ? issue.problem : `options.${issue.path} ${issue.problem}`,
    );
    throw new McpBridgeError(
      `The bridge options for ${label} are invalid: ${problems.join('; ')}. Fix these fields (see the @aptix/tool-mcp-bridge README).`,
    );
  }
  const options = checked.value;
  if ((options.stdio === undefined) === (options.http === undefined)) {
    throw new McpBridgeError(
      `The bridge options for ${label} must give exactly one of "stdio" (a command to start) or "http" (a Streamable HTTP URL). Fix: keep one.`,
    );
  }
  if (options.http) {
    let url: URL;
    try {
      url = new URL(options.http.url);
    } catch {
      throw new McpBridgeError(
        `The bridge options for ${label}: options.http.url is not a URL. Fix: give the full endpoint, e.g. https://mcp.example.com/mcp.`,
      );
    }
    if (url.username !== '' || url.password !== '') {
      throw new McpBridgeError(
        `The bridge options for ${label}: options.http.url carries a user name or password. ` +
          `Credentials never go in the file. Fix: remove them from the URL and send them as a header ` +
          `from an environment variable, e.g. "Authorization": { "env": ` +
          `"${envName(options.name)}_TOKEN", "prefix": "Bearer " }.`,
      );
    }
    for (const [header, headerValue] of Object.entries(options.http.headers ?? {})) {
      if (typeof headerValue === 'string' && SECRET_HEADER.test(header)) {
        throw new McpBridgeError(
          `The bridge options for ${label} write the credential header "${header}" into the ` +
            `configuration. Credentials never go in the file. Fix: set it from an environment variable: ` +
            `"${header}": { "env": "${envName(options.name)}_TOKEN", "prefix": "Bearer " }.`,
        );
      }
    }
  }
  for (const [name, envValue] of Object.entries(options.stdio?.env ?? {})) {
    if (typeof envValue === 'string' && SECRET_ENV.test(name)) {
      throw new McpBridgeError(
        `The bridge options for ${label} write the credential ${name} into the configuration. ` +
          `Credentials never go in the file. Fix: "${name}": { "env": "${name}" } passes it from the ` +
          `host's environment.`,
      );
    }
  }
  if (
    options.reconnect?.initialDelayMs !== undefined &&
    options.reconnect.maxDelayMs !== undefined &&
    options.reconnect.initialDelayMs > options.reconnect.maxDelayMs
  ) {
    throw new McpBridgeError(
      `The bridge options for ${label}: reconnect.initialDelayMs is larger than reconnect.maxDelayMs. Fix: make the first delay the smaller.`,
    );
  }
  return options;
}

/** Reads `{ env, prefix }` values from the environment; names the variable (never its value) when it is unset. */
export function resolveValues(
  values: Readonly<Record<string, string | FromEnv>> | undefined,
  what: string,
  server: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values ?? {})) {
    if (typeof value === 'string') {
      out[key] = value;
      continue;
    }
    const read = env[value.env];
    if (read === undefined || read === '') {
      throw new McpBridgeError(
        `The environment variable ${value.env} (for ${what} ${key} of MCP server "${server}") is not set. Fix: set it in the host's environment.`,
      );
    }
    out[key] = (value.prefix ?? '') + read;
  }
  return out;
}

function envName(name: string): string {
  return (
    name
      .toUpperCase()
      .replace(/[^A-Z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'MCP'
  );
}
