/**
 * The executor under hostile and heavy input, property-based (fast-check): whatever arrives as a tool's
 * arguments, `execute` resolves to a well-formed InvokeResult, pollutes no prototype and leaks no stack.
 * Then its time-outs under load: many calls in flight, with many different limits, each cut off at its
 * own; and no timer left holding the process open once the calls are done.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AgentToolExecutor,
  AgentToolRegistry,
  CapturingAdminLogger,
  ExecutionErrorCode,
  functionToolSchema,
  TypedAgentTool,
  type AgentToolExecutionContext,
  type InvokeResult,
  type ToolDependencies,
} from '../src/index.js';
import { describeMalformedResult, garbageArguments } from '../src/testing/index.js';
import { EchoTool, PlainTool, ThrowingTool } from './fixtures/tools.js';

const context: AgentToolExecutionContext = { sessionId: 'session-1', conversationId: 'conversation-1' };
const STACK = /\n\s+at\s|\bat \S+:\d+:\d+/;

/** Every own key of the built-in prototypes, so a property can tell that none was added. */
function prototypeKeys(): string {
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype]
    .map((proto) => Reflect.ownKeys(proto).map(String).sort().join(','))
    .join('|');
}

function expectWellFormed(result: InvokeResult<string>): void {
  expect(describeMalformedResult(result)).toBeUndefined();
  for (const error of result.errors) expect(error.message).not.toMatch(STACK);
}

/** JSON text a model might send: valid, cut off, with prototype keys (plain or escaped), huge or deep. */
function argumentText(declared: readonly string[]): fc.Arbitrary<string> {
  const propertyNames = declared.length > 0 ? declared : ['value'];
  const key = fc.constantFrom(...propertyNames, '__proto__', 'constructor', 'prototype', 'toString', '\\u005f_proto__');
  const hostile = fc
    .tuple(
      key,
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom('__proto__', '\\u005f\\u005fproto\\u005f\\u005f', 'constructor'),
    )
    .map(
      ([name, value, proto]) =>
        `{"${name}":${JSON.stringify(value)},"${proto}":{"prototype":{"polluted":true},"polluted":true}}`,
    );
  const nearValid = fc
    .dictionary(fc.constantFrom(...propertyNames), fc.jsonValue({ maxDepth: 2 }))
    .map((value) => JSON.stringify(value));
  const depth = fc.integer({ min: 1, max: 20_000 });
  return fc.oneof(
    { arbitrary: fc.json({ maxDepth: 4 }), weight: 4 },
    { arbitrary: nearValid, weight: 4 },
    { arbitrary: hostile, weight: 3 },
    { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
    {
      arbitrary: fc
        .json()
        .chain((text) => fc.integer({ min: 0, max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut))),
      weight: 2,
    },
    { arbitrary: depth.map((d) => '['.repeat(d) + ']'.repeat(d)), weight: 1 },
    { arbitrary: depth.map((d) => `{"${propertyNames[0] ?? 'a'}":${'{"a":'.repeat(d)}1${'}'.repeat(d)}}`), weight: 1 },
    { arbitrary: depth.map((d) => '{"a":'.repeat(d)), weight: 1 },
    {
      arbitrary: fc
        .integer({ min: 100_000, max: 2_000_000 })
        .map((n) => JSON.stringify({ [propertyNames[0] ?? 'a']: 'x'.repeat(n) })),
      weight: 1,
    },
  );
}

describe('AgentToolExecutor under arbitrary arguments', () => {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools([EchoTool, PlainTool, ThrowingTool]);
  const executor = new AgentToolExecutor({ registry, logger });

  for (const name of registry.names()) {
    const propertyNames = Object.keys(registry.get(name)!.parameters.properties as object);

    it(`${name}: JSON text of any shape`, async () => {
      const before = prototypeKeys();
      await fc.assert(
        fc.asyncProperty(argumentText(propertyNames), async (text) => {
          const result = await executor.execute(name, text, context);
          expectWellFormed(result);
          expect(prototypeKeys()).toBe(before);
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        }),
        { numRuns: 250 },
      );
    });

    it(`${name}: values already parsed, as an HTTP body brings them`, async () => {
      const before = prototypeKeys();
      // Parsed by JSON.parse, so "__proto__" is an own key, as in a body parsed by any server.
      const parsed = argumentText(propertyNames).chain((text) => {
        try {
          return fc.constant(JSON.parse(text) as unknown);
        } catch {
          return fc.jsonValue();
        }
      });
      await fc.assert(
        fc.asyncProperty(parsed, async (value) => {
          expectWellFormed(await executor.execute(name, value, context));
          expect(prototypeKeys()).toBe(before);
        }),
        { numRuns: 150 },
      );
    });

    it(`${name}: the contract kit's garbage corpus`, async () => {
      const before = prototypeKeys();
      for (const { json } of garbageArguments(registry.get(name)!.parameters)) {
        expectWellFormed(await executor.execute(name, json, context));
      }
      expect(prototypeKeys()).toBe(before);
    });
  }

  it('never logs the arguments or a stack into a result, whatever the tool threw', () => {
    for (const entry of logger.entries)
      expect(entry.tag).toMatch(/^\[test_\w+_ExecuteAsync__\w+\]$|^\[AgentToolRegistry/);
  });
});

// ---------------------------------------------------------------------------------------------
// Time-outs under load
// ---------------------------------------------------------------------------------------------

const NoArgs = { type: 'object' as const, properties: {}, required: [] as string[], additionalProperties: false };

/** Never answers, and records whether its signal was aborted. It changes nothing, so cutting it off is harmless. */
class HangTool extends TypedAgentTool<typeof NoArgs & never> {
  static readonly ToolName = 'test_hang';
  static readonly ToolUsageMetadata = 'Never answers.';
  static readonly ToolAnnotations = { readOnlyHint: true };
  static readonly aborted: string[] = [];
  static getSchema() {
    return functionToolSchema(HangTool.ToolName, 'Never answers.', NoArgs);
  }
  constructor({ logger }: ToolDependencies) {
    super(NoArgs as never, logger);
  }
  protected run(_args: object, context: AgentToolExecutionContext, signal: AbortSignal) {
    return new Promise<object>(() => {
      signal.addEventListener('abort', () => HangTool.aborted.push(context.conversationId ?? '?'), { once: true });
    });
  }
}

/** Answers at once, through a promise: the executor races it all the same. */
class QuickTool extends TypedAgentTool<typeof NoArgs & never> {
  static readonly ToolName = 'test_quick';
  static readonly ToolUsageMetadata = 'Answers at once.';
  static getSchema() {
    return functionToolSchema(QuickTool.ToolName, 'Answers at once.', NoArgs);
  }
  constructor({ logger }: ToolDependencies) {
    super(NoArgs as never, logger);
  }
  protected async run(_args: object, context: AgentToolExecutionContext) {
    return { ok: true, conversationId: context.conversationId ?? null };
  }
}

describe('AgentToolExecutor time-outs under load', () => {
  it('cuts every hanging call off at its own limit, and answers every prompt one, with hundreds in flight', async () => {
    const registry = new AgentToolRegistry();
    registry.registerTools([HangTool, QuickTool]);
    const executor = new AgentToolExecutor({ registry, defaultTimeoutMs: 60_000 });
    HangTool.aborted.length = 0;
    // Limits out of order, several calls per limit, quick calls interleaved: every queue is exercised.
    const limits = Array.from({ length: 240 }, (_, i) => 5 + ((i * 37) % 13) * 7);
    const calls = limits.map((timeoutMs, i) =>
      i % 3 === 0
        ? executor
            .execute('test_quick', '{}', { conversationId: `quick-${i}` }, { timeoutMs })
            .then((result) => ({ kind: 'quick' as const, i, timeoutMs, result }))
        : executor
            .execute('test_hang', '{}', { conversationId: `hang-${i}` }, { timeoutMs })
            .then((result) => ({ kind: 'hang' as const, i, timeoutMs, result })),
    );
    const outcomes = await Promise.all(calls);
    for (const outcome of outcomes) {
      if (outcome.kind === 'quick') {
        expect(outcome.result).toEqual({
          successful: true,
          result: JSON.stringify({ ok: true, conversationId: `quick-${outcome.i}` }),
          errors: [],
        });
      } else {
        expect(outcome.result.errors[0]).toEqual({
          code: ExecutionErrorCode.TIMEOUT,
          message: expect.stringContaining(`within ${outcome.timeoutMs} ms`),
        });
      }
    }
    // Each hanging tool was told, through its own signal.
    expect(new Set(HangTool.aborted)).toEqual(
      new Set(outcomes.filter((o) => o.kind === 'hang').map((o) => `hang-${o.i}`)),
    );
  });

  it('answers calls started while earlier ones wait out longer limits', async () => {
    const registry = new AgentToolRegistry();
    registry.registerTools([HangTool, QuickTool]);
    const executor = new AgentToolExecutor({ registry });
    const long = executor.execute('test_hang', '{}', context, { timeoutMs: 400 });
    const short = await executor.execute('test_hang', '{}', context, { timeoutMs: 10 });
    expect(short.errors[0]!.message).toContain('within 10 ms');
    expect((await executor.execute('test_quick', '{}', context)).successful).toBe(true);
    expect((await long).errors[0]!.message).toContain('within 400 ms');
  });

  it('leaves no timer holding the process open once its calls are done', async () => {
    // A process whose only call finished long before the 60 s limit must exit by itself: the shared
    // deadline timer may stay armed, but it no longer keeps the event loop alive.
    const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url));
    const script = `
      import { AgentToolExecutor, AgentToolRegistry, TypedAgentTool, functionToolSchema } from ${JSON.stringify(entry)};
      const Args = { type: 'object', properties: {}, required: [], additionalProperties: false };
      class Slowish extends TypedAgentTool {
        static ToolName = 'test_slowish'; static ToolUsageMetadata = 'Answers after a tick.';
        static getSchema() { return functionToolSchema('test_slowish', 'Answers after a tick.', Args); }
        constructor({ logger }) { super(Args, logger); }
        async run() { await new Promise((resolve) => setTimeout(resolve, 5)); return { done: true }; }
      }
      const registry = new AgentToolRegistry();
      registry.registerTool(Slowish);
      const result = await new AgentToolExecutor({ registry, defaultTimeoutMs: 60_000 }).execute('test_slowish', '{}');
      process.stdout.write(JSON.stringify(result));
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A process still alive well after its call (a few ms) is being held open: stop it, and fail.
    const guard = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(guard);
    expect(stderr).toBe('');
    expect(code, 'the process did not exit by itself once its call was done').toBe(0);
    expect(JSON.parse(stdout)).toEqual({ successful: true, result: '{"done":true}', errors: [] });
  });
});

describe('a cancellation signal made on demand', () => {
  it('is never made for a call that answers at once', async () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(EchoTool);
    let made = 0;
    const signal = () => {
      made++;
      return new AbortController().signal;
    };
    for (let i = 0; i < 20; i++)
      expect(
        (await new AgentToolExecutor({ registry }).execute('test_echo', '{"text":"x"}', context, { signal }))
          .successful,
      ).toBe(true);
    expect(made).toBe(0);
  });

  it('is made once for a call still running, and cancels it when it aborts', async () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(HangTool);
    const controller = new AbortController();
    let made = 0;
    const pending = new AgentToolExecutor({ registry, cancelGraceMs: 5 }).execute('test_hang', '{}', context, {
      timeoutMs: 60_000,
      signal: () => {
        made++;
        return controller.signal;
      },
    });
    controller.abort();
    const result = await pending;
    expect(made).toBe(1);
    expect(JSON.parse(result.result!)).toMatchObject({ wasCancelled: true, sessionId: 'session-1' });
  });

  it('cancels at once when it comes already aborted (the caller left while the call started)', async () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(HangTool);
    const result = await new AgentToolExecutor({ registry, cancelGraceMs: 5 }).execute('test_hang', '{}', context, {
      timeoutMs: 60_000,
      signal: () => AbortSignal.abort(),
    });
    expect(JSON.parse(result.result!)).toMatchObject({ wasCancelled: true });
  });

  it('still times the call out when making it throws', async () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(HangTool);
    const result = await new AgentToolExecutor({ registry }).execute('test_hang', '{}', context, {
      timeoutMs: 10,
      signal: () => {
        throw new Error('no signal today');
      },
    });
    expect(result.errors[0]!.code).toBe(ExecutionErrorCode.TIMEOUT);
  });
});
