/**
 * The host under hostile input, load, crashes and hanging tools, as issue 9 asks:
 * - property-based (fast-check) over every registered first-party tool, through the executor, over real
 *   HTTP and over MCP: whatever the arguments, a well-formed answer, no prototype polluted, no stack;
 * - hundreds of concurrent mode changes on one session through HTTP, on SQLite and PostgreSQL;
 * - kill -9 in the middle of a burst of mode changes: after a restart every acknowledged change is there;
 * - a hanging tool is cut off at its limit while the host keeps answering;
 * - 200 concurrent connections, and a 413 for an oversized body without reading it all.
 * No assertion is about time: waits are bounded only so that a broken host fails instead of hanging.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentToolExecutionContext, InvokeResult } from '@aptix/tool-contract';
import { AptixHost } from '../src/aptix-host.js';
import { loadConfig } from '../src/config.js';
import { composeHost } from '../src/container.js';
import { createMcpServer } from '../src/mcp/mcp-server.js';
import { postgresAvailable, postgresSchema, scratch, startHost, type RunningHost } from './support.js';

const FIRST_PARTY = ['agent_hello_world', 'testing_ping_pong', 'testing_calculator', 'testing_delay', 'testing_failure_injection', 'testing_issue_refund', 'agent_list_modes', 'agent_change_mode'];
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
  const enums = Object.values(properties).flatMap((property) => [...(property.enum ?? []), ...('const' in property ? [property.const] : [])]);
  return { tool, names: Object.keys(properties), enums };
}

/** Arguments as JSON text: any JSON, near-valid objects, prototype keys (plain and escaped), cut-off, huge or deep text. */
function argumentText({ tool, names: declared, enums }: Shape): fc.Arbitrary<string> {
  const names = declared.length > 0 ? declared : ['value'];
  // Values a property could take, valid or not: the schema's own enum values (so every branch of a tool
  // is reached), the catalog's mode keys, booleans and any JSON.
  const other = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(...MODES), fc.boolean(), fc.string({ maxLength: 12 }), fc.integer({ min: -5, max: 20 }));
  const value = enums.length > 0 ? fc.oneof({ arbitrary: fc.constantFrom(...enums), weight: 1 }, { arbitrary: other, weight: 1 }) : other;
  const nearValid = fc.dictionary(fc.constantFrom(...names), value).map((args) => JSON.stringify(tame(tool, args)));
  const hostile = fc
    .tuple(fc.constantFrom(...names), fc.jsonValue({ maxDepth: 2 }), fc.constantFrom('__proto__', '\\u005f_proto__', 'constructor'), fc.boolean())
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
    { arbitrary: fc.json().chain((text) => fc.nat(Math.max(0, text.length - 1)).map((cut) => text.slice(0, cut))), weight: 2 },
    { arbitrary: depth.map((d) => '['.repeat(d) + ']'.repeat(d)), weight: 1 },
    { arbitrary: depth.map((d) => `{"${names[0]}":${'{"a":'.repeat(d)}1${'}'.repeat(d)}}`), weight: 1 },
    { arbitrary: fc.integer({ min: 100_000, max: 800_000 }).map((n) => JSON.stringify({ [names[0]!]: 'x'.repeat(n) })), weight: 1 },
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
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype].map((proto) => Reflect.ownKeys(proto).map(String).sort().join(',')).join('|');
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
  return new AptixHost(await composeHost(await loadConfig({ env: { APTIX_DB: db }, cwd: dir }), { pino: pino({ level: 'silent' }) }));
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
  ] as const)('answers %s with a well-formed InvokeResult, never throwing, polluting or leaking a stack', async (_kind, arbitrary) => {
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
  });
});

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly json: any;
}

async function send(host: RunningHost, path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(host.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
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
    expect(answer.json, where).toMatchObject({ status: 'pending_approval', approvalId: expect.any(String), message: expect.stringContaining('Nothing has run yet') });
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
    const schemas = (await (await fetch(`${host.url}/v1/tools?format=mcp`)).json()) as { tools: Array<{ name: string; inputSchema: { properties?: object } }> };
    expect(schemas.tools.map((tool) => tool.name)).toEqual(FIRST_PARTY);
    for (const { name, inputSchema } of schemas.tools) {
      const shape = shapeOf(name, inputSchema);
      const body = fc.oneof(
        // arguments as an object, as JSON text, as any other JSON value, or a body that is not JSON at all
        argumentValue(shape).map((args) => bodyText({ arguments: args })),
        argumentText(shape).map((text) => JSON.stringify({ arguments: text })),
        argumentText(shape).map((text) => `{"arguments":${text}}`),
        fc.tuple(argumentValue(shape), fc.jsonValue({ maxDepth: 2 })).map(([args, context]) => bodyText({ arguments: args, context })),
        fc.string({ maxLength: 40 }),
      );
      await fc.assert(
        fc.asyncProperty(body, async (text) => expectPresented(await send(host, `/v1/tools/${name}/invoke`, text), name)),
        { numRuns: 100 },
      );
    }
    expect(host.child.exitCode).toBeNull();
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  it('let no payload plant a property on its prototypes', async () => {
    // Had {"__proto__":{"b":5}} reached Object.prototype, ajv would find the missing 'b' there.
    const canary = await send(host, '/v1/tools/testing_calculator/invoke', JSON.stringify({ arguments: { operation: 'add', a: 1 } }));
    expect(canary.json).toMatchObject({ successful: false, errors: [{ code: 'INVALID_ARGUMENTS', message: expect.stringContaining("'b' is required") }] });
    const echo = await send(host, '/v1/tools/testing_ping_pong/invoke', JSON.stringify({ arguments: { message: 'still clean' } }));
    expect(echo.json).toEqual({ successful: true, result: { reply: 'pong: still clean', count: 1, sessionId: null, conversationId: null }, errors: [] });
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
      const args = argumentValue(shapeOf(name, registry.get(name)!.parameters)).map((value) => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value }));
      await fc.assert(
        fc.asyncProperty(args, async (value) => {
          const result = await client.callTool({ name, arguments: value });
          const content = result.content as Array<{ type: string; text: string }>;
          expect(Array.isArray(content) && content.length > 0, name).toBe(true);
          expect(content[0]!.type, name).toBe('text');
          expect(content[0]!.text, name).not.toMatch(STACK);
          // A result goes out once: as text, with structuredContent only for a tool that declares an output schema.
          if (!result.isError) expect(JSON.parse(content[0]!.text), name).toBeDefined();
          expect(result.structuredContent, name).toBeUndefined();
          expect(prototypeKeys(), name).toBe(before);
        }),
        { numRuns: 150 },
      );
      await client.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a schema per test, dropped afterwards
// ---------------------------------------------------------------------------------------------

const pgAvailable = await postgresAvailable('the PostgreSQL robustness tests are');

interface Store {
  readonly name: string;
  readonly available: boolean;
  /** A fresh database: its URL for APTIX_DB, and how to remove it. */
  create(): { db: string; dispose(): Promise<void> };
}

const STORES: Store[] = [
  {
    name: 'SQLite',
    available: true,
    create() {
      const space = scratch();
      return { db: space.db, dispose: async () => space.cleanup() };
    },
  },
  {
    name: 'PostgreSQL',
    available: pgAvailable,
    create: () => postgresSchema('aptix_robust'),
  },
];

async function changeMode(host: RunningHost, sessionId: string, mode: string, reason: string): Promise<Answer> {
  return send(host, '/v1/tools/agent_change_mode/invoke', JSON.stringify({ arguments: { mode, branch: false, reason }, context: { sessionId } }));
}

function expectUnbrokenChain(session: { mode: string; history: Array<{ fromMode: string; toMode: string }> }): void {
  let previous = 'general';
  session.history.forEach((change, index) => {
    expect(change.fromMode, `history[${index}] does not start where history[${index - 1}] ended`).toBe(previous);
    previous = change.toMode;
  });
  expect(session.mode).toBe(previous);
}

async function sessionView(host: RunningHost, id: string) {
  // One page holds the whole history these tests make (200 changes; the default page is 100).
  return (await (await fetch(`${host.url}/v1/sessions/${id}?limit=1000`)).json()) as { mode: string; history: Array<{ fromMode: string; toMode: string; reason: string }> };
}

// ---------------------------------------------------------------------------------------------
// Concurrency and crashes, on both stores
// ---------------------------------------------------------------------------------------------

for (const store of STORES) {
  describe.skipIf(!store.available)(`${store.name}: concurrent mode changes and a crash, over HTTP`, () => {
    it('loses none of 200 concurrent mode changes on one session through the host', async () => {
      const database = store.create();
      const host = await startHost({ env: { APTIX_DB: database.db } });
      try {
        const { id } = (await send(host, '/v1/sessions', '{}')).json as { id: string };
        const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => changeMode(host, id, MODES[(i * 5) % 3]!, `concurrent ${i}`)));
        for (const answer of answers) expect(answer.json).toMatchObject({ successful: true, result: { success: true } });
        const session = await sessionView(host, id);
        expect(session.history).toHaveLength(200);
        expect(new Set(session.history.map((change) => change.reason))).toEqual(new Set(Array.from({ length: 200 }, (_, i) => `concurrent ${i}`)));
        expectUnbrokenChain(session);
      } finally {
        await host.stop();
        await database.dispose();
      }
    });

    it('keeps every acknowledged mode change when the host is killed with SIGKILL in the middle of a burst', async () => {
      const database = store.create();
      const dir = scratch();
      try {
        const first = await startHost({ env: { APTIX_DB: database.db }, cwd: dir.dir });
        const { id } = (await send(first, '/v1/sessions', '{}')).json as { id: string };
        const acknowledged: string[] = [];
        let next = 0;
        let killed = false;
        // 8 clients change the mode back to back; once 40 changes are acknowledged, the host is killed
        // mid-flight, with requests still on the wire.
        const client = async () => {
          while (!killed || first.child.exitCode === null) {
            const reason = `burst ${next++}`;
            let answer: Answer;
            try {
              answer = await changeMode(first, id, MODES[next % 3]!, reason);
            } catch {
              return; // the connection died with the host
            }
            if (answer.json?.successful === true) acknowledged.push(reason);
            if (acknowledged.length >= 40 && !killed) {
              killed = true;
              first.child.kill('SIGKILL');
            }
          }
        };
        await Promise.all(Array.from({ length: 8 }, client));
        expect(await first.stop()).toBeNull(); // it died of the signal, not by exiting
        expect(first.child.signalCode).toBe('SIGKILL');
        expect(acknowledged.length).toBeGreaterThanOrEqual(40);

        if (store.name === 'SQLite') {
          const file = database.db.slice('sqlite:'.length);
          const db = new Database(file);
          try {
            expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
          } finally {
            db.close();
          }
        }
        const second = await startHost({ env: { APTIX_DB: database.db }, cwd: dir.dir });
        try {
          const session = await sessionView(second, id);
          const stored = new Set(session.history.map((change) => change.reason));
          for (const reason of acknowledged) expect(stored.has(reason), `acknowledged change "${reason}" is missing after the restart`).toBe(true);
          expectUnbrokenChain(session);
          // The store takes new changes after the crash, continuing from the mode it recovered.
          expect((await changeMode(second, id, 'ddr_authoring', 'after the crash')).json).toMatchObject({ successful: true });
          expectUnbrokenChain(await sessionView(second, id));
        } finally {
          await second.stop();
        }
      } finally {
        await database.dispose();
        dir.cleanup();
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Time-outs, connections, oversized bodies
// ---------------------------------------------------------------------------------------------

/** A tool package of two hanging tools, loaded by path as any third-party package would be. */
function writeHangingTools(dir: string, timeoutMs: number): string {
  const folder = join(dir, 'hanging-tools');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'hanging-tools', version: '1.0.0', type: 'module', main: 'index.js' }));
  const schema = (name: string) =>
    JSON.stringify({ type: 'function', name, description: 'Never answers.', parameters: { type: 'object', properties: { label: { type: 'string', description: 'A label for the log.' } }, required: ['label'], additionalProperties: false } });
  writeFileSync(
    join(folder, 'index.js'),
    `// Never answers; says in the log when its signal aborts.
    export class HangTool {
      static ToolName = 'fixture_hang';
      static ToolUsageMetadata = 'Never answers; for time-out tests.';
      static TimeoutMs = ${timeoutMs};
      // It changes nothing, so cutting it off is harmless: TIMEOUT, not OUTCOME_UNKNOWN.
      static ToolAnnotations = { readOnlyHint: true };
      static getSchema() { return ${schema('fixture_hang')}; }
      constructor({ logger }) { this.logger = logger; }
      name = 'fixture_hang';
      isToolFullyExecutedOnServer = true;
      execute(argumentsJson, context, signal) {
        const { label } = JSON.parse(argumentsJson);
        return new Promise(() => {
          signal.addEventListener('abort', () => this.logger.addError('[fixture_hang_Aborted]', 'its signal aborted', [['Label', label]]), { once: true });
        });
      }
    }
    // Never answers, and ignores its signal altogether.
    export class StubbornTool {
      static ToolName = 'fixture_stubborn';
      static ToolUsageMetadata = 'Never answers, ignores its signal; for time-out tests.';
      static TimeoutMs = ${timeoutMs};
      static ToolAnnotations = { readOnlyHint: true };
      static getSchema() { return ${schema('fixture_stubborn')}; }
      constructor() {}
      name = 'fixture_stubborn';
      isToolFullyExecutedOnServer = true;
      execute() { return new Promise(() => {}); }
    }
    export const tools = [HangTool, StubbornTool];`,
  );
  return folder;
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!check()) throw new Error(`gave up waiting for ${what}`);
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

describe('time-outs, connections and oversized bodies, over real HTTP', () => {
  const space = scratch();
  const LIMIT_MS = 3_000;
  let host: RunningHost;
  beforeAll(async () => {
    const tools = writeHangingTools(space.dir, LIMIT_MS);
    host = await startHost({ env: { APTIX_DB: space.db, APTIX_TOOL_PACKAGES: `${tools},${FIRST_PARTY_PACKAGES}` } });
  });
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it('cuts hanging tools off at their limit, and answers other calls meanwhile', async () => {
    let settled = 0;
    const hanging = Array.from({ length: 20 }, (_, i) => {
      const tool = i % 2 === 0 ? 'fixture_hang' : 'fixture_stubborn';
      return send(host, `/v1/tools/${tool}/invoke`, JSON.stringify({ arguments: { label: `hang-${i}` } })).finally(() => settled++);
    });
    // While all twenty hang, the host answers everything else, at once.
    for (let i = 0; i < 30; i++) {
      const answer = await send(host, '/v1/tools/testing_ping_pong/invoke', JSON.stringify({ arguments: { message: `ping ${i}` } }));
      expect(answer.json).toMatchObject({ successful: true, result: { reply: `pong: ping ${i}` } });
    }
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
    expect(settled, 'no hanging call may be answered before its limit').toBe(0);

    for (const answer of await Promise.all(hanging)) {
      expect(answer.status).toBe(200);
      expect(answer.json).toMatchObject({ successful: false, result: null, errors: [{ code: 'TIMEOUT', message: expect.stringContaining(`within ${LIMIT_MS} ms`) }] });
    }
    // The tool that listens was told, through its signal, for every call.
    await waitFor(() => host.logs.filter((line) => line.tag === '[fixture_hang_Aborted]').length === 10, 'the aborted lines of fixture_hang');
    expect(new Set(host.logs.filter((line) => line.tag === '[fixture_hang_Aborted]').map((line) => line.Label))).toEqual(new Set(Array.from({ length: 10 }, (_, i) => `hang-${i * 2}`)));
  });

  it('holds 200 concurrent connections, each with a call in flight', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 200 });
    const ports = new Set<number>();
    const { hostname, port } = new URL(host.url);
    const body = JSON.stringify({ arguments: { milliseconds: 300 } });
    try {
      const answers = await Promise.all(
        Array.from(
          { length: 200 },
          () =>
            new Promise<{ status: number; json: any }>((resolve, reject) => {
              const req = httpRequest({ hostname, port, agent, method: 'POST', path: '/v1/tools/testing_delay/invoke', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
                let text = '';
                res.on('data', (chunk: Buffer) => (text += chunk.toString()));
                res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
              });
              req.on('socket', (socket) => socket.once('connect', () => ports.add(socket.localPort!)));
              req.on('error', reject);
              req.end(body);
            }),
        ),
      );
      expect(ports.size, 'every call had a connection of its own').toBe(200);
      for (const answer of answers) expect(answer).toMatchObject({ status: 200, json: { successful: true, result: { wasCancelled: false, requestedMs: 300 } } });
    } finally {
      agent.destroy();
    }
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  /**
   * Streams up to `totalMiB` of body and reports the answer and how much was written before the server
   * closed the connection: a server that buffered the body would read it all first.
   */
  function streamBody(
    headers: Record<string, string>,
    totalMiB: number,
    options: { hold?: boolean } = {},
  ): Promise<{ status: number | undefined; body: string; writtenMiB: number; closedByServer: boolean }> {
    const { hostname, port } = new URL(host.url);
    return new Promise((resolve) => {
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let written = 0;
      let status: number | undefined;
      let body = '';
      let done = false;
      const finish = (closedByServer: boolean) => {
        if (done) return;
        done = true;
        resolve({ status, body, writtenMiB: written / 2 ** 20, closedByServer });
      };
      const req = httpRequest({ hostname, port, method: 'POST', path: '/v1/tools/testing_ping_pong/invoke', headers: { 'content-type': 'application/json', ...headers } });
      let reset = false;
      req.on('response', (res: IncomingMessage) => {
        status = res.statusCode;
        res.on('data', (data: Buffer) => (body += data.toString()));
        res.on('error', () => undefined);
      });
      // A write refused (EPIPE, ECONNRESET): the server closed the connection. Wait for 'close', which
      // comes once whatever part of the answer arrived has been read.
      req.on('error', () => (reset = true));
      req.on('close', () => finish(reset || written < totalMiB * 2 ** 20));
      req.write('{"arguments":{"message":"');
      const pump = () => {
        while (!done && !reset && written < totalMiB * 2 ** 20) {
          written += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        // With `hold`, the body is left unfinished: only the host can end the exchange.
        if (!done && !reset && !options.hold) req.end('"}}');
      };
      pump();
    });
  }

  it.each([
    ['with no Content-Length (chunked)', { 'transfer-encoding': 'chunked' }, 1.25],
    ['whose Content-Length announces 1 GiB', { 'content-length': String(2 ** 30) }, 0.05],
  ])('answers a body %s that goes over the limit with 413', async (_label, headers, sentMiB) => {
    // Just over the limit (or, with the size announced, hardly anything), then the client waits: the host
    // has read all that was sent, so its answer arrives whole.
    const outcome = await streamBody(headers, sentMiB, { hold: true });
    expect(outcome.status).toBe(413);
    expect(JSON.parse(outcome.body)).toEqual({ error: { code: 'BODY_TOO_LARGE', message: expect.stringContaining('1048576 bytes') } });
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  it.each([
    ['with no Content-Length (chunked)', { 'transfer-encoding': 'chunked' }],
    ['whose Content-Length announces 1 GiB', { 'content-length': String(2 ** 30) }],
  ])('cuts off a 256 MiB body %s after reading about the limit, holding none of it', async (_label, headers) => {
    const before = rssMiB(host.child.pid!);
    const outcome = await streamBody(headers, 256);
    // The host stopped reading at the 1 MiB limit and closed the connection: the client could push only
    // what fits in the socket buffers in between. A host buffering the body would have taken all 256 MiB.
    expect(outcome.closedByServer, 'the host closed the connection rather than read the rest').toBe(true);
    expect(outcome.writtenMiB).toBeLessThan(32);
    // Its 413 may be overtaken by the connection reset (the unread body is still in the host's buffers).
    if (outcome.status !== undefined) expect(outcome.status).toBe(413);
    expect(rssMiB(host.child.pid!) - before, 'the host did not hold the body in memory').toBeLessThan(64);
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });

  it('survives a body longer than its Content-Length says, answering 400 if anything', async () => {
    const outcome = await streamBody({ 'content-length': '100' }, 8);
    if (outcome.status !== undefined) expect(outcome.status).toBe(400);
    expect(outcome.body).not.toMatch(STACK);
    expect(outcome.writtenMiB).toBeLessThan(8);
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
  });
});
