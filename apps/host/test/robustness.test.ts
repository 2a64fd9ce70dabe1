/**
 * The host under hostile input, as issue 9 asks: property-based (fast-check) over every registered
 * first-party tool, through the executor, over real HTTP and over MCP: whatever the arguments, a
 * well-formed answer, no prototype polluted, no stack. Crashes under load: robustness-crash.test.ts;
 * hanging tools, connections and bodies: robustness-http.test.ts.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentToolExecutionContext, InvokeResult } from '@aptix/tool-contract';
import { AptixHost } from '../src/aptix-host.js';
import { loadConfig } from '../src/config.js';
import { composeHost } from '../src/container.js';
import { createMcpServer } from '../src/mcp/mcp-server.js';
import { scratch, startHost, type RunningHost } from './support.js';

const FIRST_PARTY = [
  'agent_hello_world',
  'testing_ping_pong',
  'testing_calculator',
  'testing_delay',
  'testing_failure_injection',
  'testing_issue_refund',
  'agent_list_modes',
  'agent_change_mode',
];
const FIRST_PARTY_PACKAGES = '@aptix/tool-samples,@aptix/tool-mode-catalog,@aptix/tool-mode-change';
const STACK = /\n\s+at\s|\bat \S+:\d+:\d+/;
const MODES = ['general', 'ddr_authoring', 'tool_diagnostics'];

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

/**
 * `testing_delay` waits as long as it is told (up to a minute): a generated `milliseconds` is kept
 * small so the suite stays fast. Every other value goes through untouched.
 */
function tame(tool: string, value: unknown): unknown {
  if (tool !== 'testing_delay' || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const ms = (value as Record<string, unknown>).milliseconds;
  return typeof ms === 'number' && ms > 20 ? { ...(value as object), milliseconds: 20 } : value;
}

/** A tool's parameters as the fuzzers see them: its property names, and every value its enums allow. */
interface Shape {
  readonly tool: string;
  readonly names: readonly string[];
  readonly enums: readonly unknown[];
}

function shapeOf(tool: string, parameters: { properties?: unknown }): Shape {
  const properties = (parameters.properties ?? {}) as Record<string, { enum?: unknown[]; const?: unknown }>;
  const enums = Object.values(properties).flatMap((property) => [
    ...(property.enum ?? []),
    ...('const' in property ? [property.const] : []),
  ]);
  return { tool, names: Object.keys(properties), enums };
}

/** Arguments as JSON text: any JSON, near-valid objects, prototype keys (plain and escaped), cut-off, huge or deep text. */
function argumentText({ tool, names: declared, enums }: Shape): fc.Arbitrary<string> {
  const names = declared.length > 0 ? declared : ['value'];
  // Values a property could take, valid or not: the schema's own enum values (so every branch of a tool
  // is reached), the catalog's mode keys, booleans and any JSON.
  const other = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(...MODES),
    fc.boolean(),
    fc.string({ maxLength: 12 }),
    fc.integer({ min: -5, max: 20 }),
  );
  const value =
    enums.length > 0
      ? fc.oneof({ arbitrary: fc.constantFrom(...enums), weight: 1 }, { arbitrary: other, weight: 1 })
      : other;
  const nearValid = fc.dictionary(fc.constantFrom(...names), value).map((args) => JSON.stringify(tame(tool, args)));
  const hostile = fc
    .tuple(
      fc.constantFrom(...names),
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom('__proto__', '\\u005f_proto__', 'constructor'),
      fc.boolean(),
    )
    .map(([name, value, proto, nested]) => {
      const poison = `"${proto}":{"prototype":{"polluted":true,"b":5},"polluted":true,"b":5}`;
      // Refused for its key before any tool runs, so `value` needs no taming.
      return nested ? `{"${name}":{${poison}},"a":1}` : `{"${name}":${JSON.stringify(value)},${poison}}`;
    });
  const depth = fc.integer({ min: 1, max: 15_000 });
  return fc.oneof(
    { arbitrary: fc.json({ maxDepth: 3 }), weight: 3 },
    { arbitrary: nearValid, weight: 5 },
    { arbitrary: hostile, weight: 3 },
    { arbitrary: fc.string({ maxLength: 30 }), weight: 2 },
    {
      arbitrary: fc.json().chain((text) => fc.nat(Math.max(0, text.length - 1)).map((cut) => text.slice(0, cut))),
      weight: 2,
    },
    { arbitrary: depth.map((d) => '['.repeat(d) + ']'.repeat(d)), weight: 1 },
    { arbitrary: depth.map((d) => `{"${names[0]}":${'{"a":'.repeat(d)}1${'}'.repeat(d)}}`), weight: 1 },
    {
      arbitrary: fc.integer({ min: 100_000, max: 800_000 }).map((n) => JSON.stringify({ [names[0]!]: 'x'.repeat(n) })),
      weight: 1,
    },
  );
}

/** The same inputs as values, parsed the way any server parses a body (so "__proto__" is an own key). */
function argumentValue(shape: Shape): fc.Arbitrary<unknown> {
  return argumentText(shape).chain((text) => {
    try {
      return fc.constant(JSON.parse(text) as unknown);
    } catch {
      return fc.jsonValue({ maxDepth: 2 }).map((value) => tame(shape.tool, value));
    }
  });
}

/** Every own key of the built-in prototypes: a property tells from it that nothing was planted. */
function prototypeKeys(): string {
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype]
    .map((proto) => Reflect.ownKeys(proto).map(String).sort().join(','))
    .join('|');
}

function expectInvokeResult(result: InvokeResult<string>, where: string): void {
  expect(typeof result.successful, where).toBe('boolean');
  expect(Array.isArray(result.errors), where).toBe(true);
  if (result.successful) {
    expect(typeof result.result, where).toBe('string');
    expect(() => JSON.parse(result.result), where).not.toThrow();
    expect(result.errors, where).toEqual([]);
  } else {
    expect(result.result, where).toBeNull();
    expect(result.errors.length, where).toBeGreaterThan(0);
  }
  for (const error of result.errors) {
    expect(typeof error.message === 'string' && error.message.trim() !== '', where).toBe(true);
    expect(error.code === undefined || typeof error.code === 'string', where).toBe(true);
    expect(error.message, where).not.toMatch(STACK);
  }
}

async function inProcessHost(db: string, dir: string): Promise<AptixHost> {
  return new AptixHost(
    await composeHost(await loadConfig({ env: { APTIX_DB: db }, cwd: dir }), { pino: pino({ level: 'silent' }) }),
  );
}

// ---------------------------------------------------------------------------------------------
// Property-based: executor, HTTP, MCP
// ---------------------------------------------------------------------------------------------

describe('every first-party tool, through the executor, under arbitrary arguments', () => {
  const space = scratch();
  let host: AptixHost;
  let context: AgentToolExecutionContext;
  beforeAll(async () => {
    host = await inProcessHost(space.db, space.dir);
    const session = await host.createSession({ mode: 'tool_diagnostics', org: 'acme', user: 'fuzz' });
    context = { sessionId: session.id, conversationId: 'fuzz', org: 'acme', user: 'fuzz', mode: session.mode };
  });
  afterAll(async () => {
    await host?.close();
    space.cleanup();
  });

  it('registers exactly the first-party tools', () => {
    expect(host.cradle.registry.names()).toEqual(FIRST_PARTY);
  });

  it.each([
    ['JSON text', argumentText],
    ['parsed values', argumentValue],
  ] as const)(
    'answers %s with a well-formed InvokeResult, never throwing, polluting or leaking a stack',
    async (_kind, arbitrary) => {
      const { registry, executor } = host.cradle;
      const before = prototypeKeys();
      for (const name of registry.names()) {
        await fc.assert(
          fc.asyncProperty(arbitrary(shapeOf(name, registry.get(name)!.parameters)), async (args) => {
            let result: InvokeResult<string>;
            try {
              result = await executor.execute(name, args, context, { timeoutMs: 2_000 });
            } catch (error) {
              throw new Error(`${name}: execute rejected: ${String(error)}`);
            }
            expectInvokeResult(result, name);
            expect(prototypeKeys(), name).toBe(before);
            expect(({} as Record<string, unknown>).polluted, name).toBeUndefined();
          }),
          { numRuns: 300 },
        );
      }
    },
  );
});

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly json: any;
}

async function send(
  host: RunningHost,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(host.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

/** A body as JSON text; values nested too deep for JSON.stringify's recursion are sent as text by the other generators. */
function bodyText(body: object): string {
  try {
    return JSON.stringify(body);
  } catch {
    return '{"arguments":"too deep to serialise here"}';
  }
}

function expectPresented(answer: Answer, where: string): void {
  expect(answer.text, where).not.toMatch(STACK);
  expect(answer.json, `${where}: the body is JSON`).toBeDefined();
  if (answer.status === 200) {
    const { successful, result, errors } = answer.json as { successful: unknown; result: unknown; errors: unknown };
    expect(typeof successful, where).toBe('boolean');
    expect(Array.isArray(errors), where).toBe(true);
    if (successful) {
      expect(result, where).not.toBeUndefined();
      expect(errors, where).toEqual([]);
    } else {
      expect(result, where).toBeNull();
      expect((errors as unknown[]).length, where).toBeGreaterThan(0);
      for (const error of errors as Array<{ message: unknown; code?: unknown }>) {
        expect(typeof error.message === 'string' && error.message !== '', where).toBe(true);
        expect(error.code === undefined || typeof error.code === 'string', where).toBe(true);
      }
    }
  } else if (answer.status === 202) {
    // A gated tool's call that waits for a person: nothing ran, and the answer says where to decide.
    expect(answer.json, where).toMatchObject({
      status: 'pending_approval',
      approvalId: expect.any(String),
      message: expect.stringContaining('Nothing has run yet'),
    });
  } else {
    expect([400, 404, 413], `${where}: status ${answer.status} ${answer.text.slice(0, 200)}`).toContain(answer.status);
    expect(answer.json, where).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
  }
}

describe('every first-party tool, over real HTTP, under arbitrary arguments and bodies', () => {
  const space = scratch();
  let host: RunningHost;
  beforeAll(async () => {
    host = await startHost({ env: { APTIX_DB: space.db } });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it('answers every call with a well-formed InvokeResult or a clean 4xx, and keeps running', async () => {
    // The schemas as the host serves them (format mcp: the parameters exactly as declared).
    const schemas = (await (await fetch(`${host.url}/v1/tools?format=mcp`)).json()) as {
      tools: Array<{ name: string; inputSchema: { properties?: object } }>;
    };
    expect(schemas.tools.map((tool) => tool.name)).toEqual(FIRST_PARTY);
    for (const { name, inputSchema } of schemas.tools) {
      const shape = shapeOf(name, inputSchema);
      const body = fc.oneof(
        // arguments as an object, as JSON text, as any other JSON value, or a body that is not JSON at all
        argumentValue(shape).map((args) => bodyText({ arguments: args })),
        argumentText(shape).map((text) => JSON.stringify({ arguments: text })),
        argumentText(shape).map((text) => `{"arguments":${text}}`),
        fc
          .tuple(argumentValue(shape), fc.jsonValue({ maxDepth: 2 }))
          .map(([args, context]) => bodyText({ arguments: args, context })),
        fc.string({ maxLength: 40 }),
      );
      await fc.assert(
        fc.asyncProperty(body, async (text) =>
          expectPresented(await send(host, `/v1/tools/${name}/invoke`, text), name),
        ),
        { numRuns: 100 },
      );
    }
    expect(host.child.exitCode).toBeNull();
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  it('let no payload plant a property on its prototypes', async () => {
    // Had {"__proto__":{"b":5}} reached Object.prototype, ajv would find the missing 'b' there.
    const canary = await send(
      host,
      '/v1/tools/testing_calculator/invoke',
      JSON.stringify({ arguments: { operation: 'add', a: 1 } }),
    );
    expect(canary.json).toMatchObject({
      successful: false,
      errors: [{ code: 'INVALID_ARGUMENTS', message: expect.stringContaining("'b' is required") }],
    });
    const echo = await send(
      host,
      '/v1/tools/testing_ping_pong/invoke',
      JSON.stringify({ arguments: { message: 'still clean' } }),
    );
    expect(echo.json).toEqual({
      successful: true,
      result: { reply: 'pong: still clean', count: 1, sessionId: null, conversationId: null },
      errors: [],
    });
  });
});

describe('every first-party tool, over MCP through the SDK client, under arbitrary arguments', () => {
  const space = scratch();
  let host: AptixHost;
  beforeAll(async () => {
    host = await inProcessHost(space.db, space.dir);
  });
  afterAll(async () => {
    await host?.close();
    space.cleanup();
  });

  it('answers every tools/call with a well-formed result, never a protocol error, polluting nothing', async () => {
    const before = prototypeKeys();
    const { registry } = host.cradle;
    for (const name of registry.names()) {
      // Each tool in a session of its own, whose mode offers every first-party tool.
      const session = await host.createSession({ mode: 'tool_diagnostics' });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await createMcpServer(host, { era: 'legacy', agentSessionId: session.id }, 'test').connect(serverSide);
      const client = new Client({ name: 'aptix-fuzz', version: '1.0.0' });
      await client.connect(clientSide);
      // MCP arguments are an object (the protocol says so); anything else is wrapped in one.
      const args = argumentValue(shapeOf(name, registry.get(name)!.parameters)).map((value) =>
        value !== null && typeof value === 'object' && !Array.isArray(value)
          ? (value as Record<string, unknown>)
          : { value },
      );
      await fc.assert(
        fc.asyncProperty(args, async (value) => {
          const result = await client.callTool({ name, arguments: value });
          const content = result.content as Array<{ type: string; text: string }>;
          expect(Array.isArray(content) && content.length > 0, name).toBe(true);
          expect(content[0]!.type, name).toBe('text');
          expect(content[0]!.text, name).not.toMatch(STACK);
          // A result goes out once: as text, with structuredContent only for a tool that declares an output schema.
          // A call waiting for a person's approval (testing_issue_refund over its threshold) is not an
          // error and has no result yet: its text says so, and its _meta carries the approval.
          const approval = (result._meta as Record<string, { status?: string }> | undefined)?.['aptix/approval'];
          if (approval !== undefined) {
            expect(approval.status, name).toBe('pending_approval');
            expect(content[0]!.text, name).toContain('Nothing has run yet');
          } else if (!result.isError) expect(JSON.parse(content[0]!.text), name).toBeDefined();
          expect(result.structuredContent, name).toBeUndefined();
          expect(prototypeKeys(), name).toBe(before);
        }),
        { numRuns: 150 },
      );
      await client.close();
    }
  });
});
