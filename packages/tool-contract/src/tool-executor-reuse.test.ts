import { Type, type Static } from 'typebox';
import { describe, expect, it } from 'vitest';
import { CapturingAdminLogger } from './admin-logger.js';
import type { AgentToolExecutionContext, ToolDependencies } from './agent-tool.js';
import { ExecutionErrorCode } from './errors.js';
import { functionToolSchema } from './schema.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool } from './typed-agent-tool.js';

// What the executor reuses from one call to the next, to allocate less per call: the default factory's
// `{ logger }`, and the signal source of a call that answered synchronously. Neither may carry anything
// of one call into another.

const Args = Type.Object(
  { text: Type.String({ minLength: 1, description: 'Text.' }) },
  { additionalProperties: false },
);
const dependencies: ToolDependencies[] = [];
const signals: AbortSignal[] = [];

class RecordingTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'test_recording';
  static readonly ToolUsageMetadata = 'Records what it is given.';
  static getSchema() {
    return functionToolSchema(RecordingTool.ToolName, 'Records its dependencies and signal.', Args);
  }
  constructor(deps: ToolDependencies) {
    super(Args, deps.logger);
    dependencies.push(deps);
  }
  protected run({ text }: Static<typeof Args>, _context: AgentToolExecutionContext, signal: AbortSignal) {
    signals.push(signal);
    return text === 'later' ? Promise.resolve({ text }) : { text };
  }
}

function setup() {
  const logger = new CapturingAdminLogger();
  const registry = new AgentToolRegistry({ logger });
  registry.registerTool(RecordingTool);
  dependencies.length = 0;
  signals.length = 0;
  return { logger, executor: new AgentToolExecutor({ registry, logger }) };
}

describe('AgentToolExecutor: what calls share', () => {
  it("builds each tool with the call's logger, in a frozen { logger } shared only by calls with that logger", async () => {
    const { logger, executor } = setup();
    const other = new CapturingAdminLogger();
    await executor.execute('test_recording', '{"text":"a"}');
    await executor.execute('test_recording', '{"text":"b"}');
    await executor.execute('test_recording', '{"text":"c"}', {}, { logger: other });
    await executor.execute('test_recording', '{"text":"d"}');
    expect(dependencies.map((deps) => deps.logger)).toEqual([logger, logger, other, logger]);
    expect(dependencies[1]).toBe(dependencies[0]);
    for (const deps of dependencies) {
      expect(Object.isFrozen(deps)).toBe(true);
      expect(Object.keys(deps)).toEqual(['logger']);
    }
  });

  it('gives every call a signal of its own, whether the call before answered at once or later', async () => {
    const { executor } = setup();
    await executor.execute('test_recording', '{"text":"now"}');
    const pending = executor.execute('test_recording', '{"text":"later"}', {}, { timeoutMs: 60_000 });
    await executor.execute('test_recording', '{"text":"now"}');
    expect((await pending).successful).toBe(true);
    expect(new Set(signals).size).toBe(3);
  });

  it("does not carry a caller's word that the arguments were checked into the next call", async () => {
    const { executor } = setup();
    expect(
      (await executor.execute('test_recording', { text: 'x', extra: 1 }, {}, { argumentsValidated: true })).successful,
    ).toBe(true);
    const next = await executor.execute('test_recording', { text: 'x', extra: 1 });
    expect(next.errors[0]?.code).toBe(ExecutionErrorCode.INVALID_ARGUMENTS);
  });
});
