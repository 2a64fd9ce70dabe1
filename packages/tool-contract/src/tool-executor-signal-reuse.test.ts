import { describe, expect, it } from 'vitest';
import type { AgentTool, AgentToolExecutionContext, ToolDependencies } from './agent-tool.js';
import { CapturingAdminLogger } from './admin-logger.js';
import { ExecutionErrorCode } from './errors.js';
import { InvokeResult } from './invoke-result.js';
import type { FunctionToolSchema } from './schema.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';

// ReleasesSignal: a tool that promises to let go of its signal when it settles gets one reused from a
// call that ended without aborting it. Cancellation and time-outs must still reach every call.

interface Step {
  /** How the call ends: answered, left hanging until its signal aborts (then rejects with the reason), or answered leaving a listener behind. */
  readonly end: 'answer' | 'wait-for-abort' | 'answer-leaving-listener';
}

const seen: AbortSignal[] = [];

function toolClass(name: string, releases: boolean) {
  return class implements AgentTool {
    static readonly ToolName = name;
    static readonly ToolUsageMetadata = 'Records its signal.';
    static readonly ReleasesSignal = releases;
    static getSchema(): FunctionToolSchema {
      return {
        type: 'function',
        name,
        description: 'Records the signal it is given.',
        parameters: {
          type: 'object',
          properties: {
            end: {
              type: 'string',
              enum: ['answer', 'wait-for-abort', 'answer-leaving-listener'],
              description: 'How to end.',
            },
          },
          required: ['end'],
          additionalProperties: false,
        },
      };
    }
    readonly name = name;
    readonly isToolFullyExecutedOnServer = true;
    constructor(_deps: ToolDependencies) {}
    execute(
      argumentsJson: string,
      _context: AgentToolExecutionContext,
      signal: AbortSignal,
    ): Promise<InvokeResult<string>> {
      seen.push(signal);
      const { end } = JSON.parse(argumentsJson) as Step;
      if (end === 'wait-for-abort')
        return new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
        );
      const listener = () => undefined;
      signal.addEventListener('abort', listener);
      if (end === 'answer') signal.removeEventListener('abort', listener);
      return Promise.resolve(InvokeResult.create(JSON.stringify({ aborted: signal.aborted })));
    }
  };
}

const Releasing = toolClass('test_releasing', true);
const Keeping = toolClass('test_keeping', false);

function setup() {
  const registry = new AgentToolRegistry();
  registry.registerTools([Releasing, Keeping]);
  seen.length = 0;
  return new AgentToolExecutor({ registry, logger: new CapturingAdminLogger(), cancelGraceMs: 60_000 });
}

const call = (
  executor: AgentToolExecutor,
  name: string,
  end: Step['end'],
  options?: Parameters<AgentToolExecutor['execute']>[3],
) => executor.execute(name, JSON.stringify({ end }), {}, options);

describe('AgentToolExecutor and ReleasesSignal', () => {
  it('hands a releasing tool the signal of its previous call, which ended without an abort', async () => {
    const executor = setup();
    for (let i = 0; i < 3; i++) expect((await call(executor, 'test_releasing', 'answer')).successful).toBe(true);
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).toBe(seen[0]);
    expect(seen[0]!.aborted).toBe(false);
  });

  it('gives a tool without the promise a signal of its own on every call', async () => {
    const executor = setup();
    await call(executor, 'test_keeping', 'answer');
    await call(executor, 'test_keeping', 'answer');
    expect(seen[1]).not.toBe(seen[0]);
  });

  it('gives calls in flight together different signals', async () => {
    const executor = setup();
    const first = new AbortController();
    const hanging = call(executor, 'test_releasing', 'wait-for-abort', { signal: first.signal });
    await call(executor, 'test_releasing', 'answer');
    expect(seen[1]).not.toBe(seen[0]);
    first.abort();
    expect(JSON.parse((await hanging).result as string)).toMatchObject({ wasCancelled: true });
  });

  it("still aborts a reused signal on the caller's cancellation, and never reuses it afterwards", async () => {
    const executor = setup();
    await call(executor, 'test_releasing', 'answer');
    const caller = new AbortController();
    const pending = call(executor, 'test_releasing', 'wait-for-abort', { signal: caller.signal });
    await Promise.resolve();
    expect(seen[1]).toBe(seen[0]); // reused…
    caller.abort();
    expect(JSON.parse((await pending).result as string)).toMatchObject({ wasCancelled: true });
    expect(seen[1]!.aborted).toBe(true); // …and aborted for its call
    expect(JSON.parse((await call(executor, 'test_releasing', 'answer')).result as string)).toEqual({ aborted: false });
    expect(seen[2]).not.toBe(seen[1]);
  });

  it('still times out a call on a reused signal', async () => {
    const executor = setup();
    await call(executor, 'test_releasing', 'answer');
    const result = await call(executor, 'test_releasing', 'wait-for-abort', { timeoutMs: 1 });
    expect(seen[1]).toBe(seen[0]);
    expect(result.errors[0]?.code).toBe(ExecutionErrorCode.TIMEOUT);
    expect(seen[1]!.aborted).toBe(true);
  });

  it('does not reuse a signal a tool left a listener on, whatever it promised', async () => {
    const executor = setup();
    await call(executor, 'test_releasing', 'answer-leaving-listener');
    await call(executor, 'test_releasing', 'answer');
    expect(seen[1]).not.toBe(seen[0]);
  });
});
