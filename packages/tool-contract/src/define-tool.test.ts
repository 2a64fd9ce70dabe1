import { Type, type Static } from 'typebox';
import { describe, expect, it } from 'vitest';
import type { AgentToolExecutionContext, AnyAgentToolClass, ToolDependencies } from './agent-tool.js';
import { CapturingAdminLogger } from './admin-logger.js';
import type { ApprovalPolicy } from './approval.js';
import { inspectToolClass } from './contract-rules.js';
import { defineTool, type ToolUsageFields } from './define-tool.js';
import { ContractErrorCode, ExecutionErrorCode, ToolContractError } from './errors.js';
import { InvokeResult } from './invoke-result.js';
import { functionToolSchema } from './schema.js';
import { ContractCheckCode, testContext, verifyToolContract, withStandIns } from './testing/index.js';
import { AgentToolExecutor } from './tool-executor.js';
import { AgentToolRegistry } from './tool-registry.js';
import { TypedAgentTool } from './typed-agent-tool.js';
import { usage } from './usage.js';

const Args = Type.Object(
  {
    amount: Type.Number({ minimum: 0, description: 'How much to refund.' }),
    note: Type.Optional(Type.String({ maxLength: 200, description: 'Why, in a sentence.' })),
  },
  { additionalProperties: false },
);
const Output = Type.Object(
  { refunded: Type.Number(), sessionId: Type.Union([Type.String(), Type.Null()]) },
  { additionalProperties: false },
);
const policy: ApprovalPolicy<Static<typeof Args>> = ({ amount }) => amount > 100;
const DESCRIPTION = 'Refunds an amount.';
const SECTIONS = {
  purpose: 'Refund an amount.',
  rules: ['Only when the user asks for a refund.', 'Never split a refund.'],
  arguments: { amount: 'how much, 0 or more.', 'note (optional)': 'why.' },
  errors: { NOTHING_TO_REFUND: 'the amount is 0; tell the user.' },
  good: '{ "amount": 25 }',
  bad: '{ "amount": -1 }: not below 0.',
} satisfies ToolUsageFields;
const GUIDE = usage`
  test_refund — Usage Guide

  Primary purpose:
  - Refund an amount.

  Rules:
  - Only when the user asks for a refund.
  - Never split a refund.

  Arguments:
  - amount: how much, 0 or more.
  - note (optional): why.

  Error codes:
  - NOTHING_TO_REFUND: the amount is 0; tell the user.
  - INVALID_ARGUMENTS: the arguments do not match the schema; the message says which. Correct them and call again.
  - APPROVAL_DENIED: a person declined the call; nothing was done. Tell the user; do not call again for the same request.
  - APPROVAL_EXPIRED: nobody decided in time; nothing was done. Ask the user whether to request it again.
  - TOOL_EXCEPTION: the tool failed unexpectedly. Tell the user; do not retry more than once.

  Good usage:
  - { "amount": 25 }

  Bad usage:
  - { "amount": -1 }: not below 0.
`;

function refund({ amount }: Static<typeof Args>, context: AgentToolExecutionContext) {
  return amount === 0
    ? InvokeResult.fromError('Nothing to refund.', 'NOTHING_TO_REFUND')
    : { refunded: amount, sessionId: context.sessionId ?? null };
}

/** Every static member the class form has, declared by hand. */
class RefundClass extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'test_refund';
  static readonly ToolUsageMetadata = GUIDE;
  static readonly Modes = ['general', 'billing'];
  static readonly ApprovalPolicy = policy;
  static readonly TimeoutMs = 5_000;
  static readonly OutputSchema = Output;
  static readonly ToolAnnotations = { readOnlyHint: false, idempotentHint: false };
  static readonly TaskSupport = 'optional';
  static readonly TaskInput = 'before';
  static getSchema() {
    return functionToolSchema(RefundClass.ToolName, DESCRIPTION, Args, { strict: true });
  }
  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }
  protected run(args: Static<typeof Args>, context: AgentToolExecutionContext) {
    return refund(args, context);
  }
}

/** The same, with defineTool. */
const RefundDefined = defineTool({
  name: 'test_refund',
  description: DESCRIPTION,
  args: Args,
  usage: SECTIONS,
  modes: ['general', 'billing'],
  approval: policy,
  timeoutMs: 5_000,
  outputSchema: Output,
  annotations: { readOnlyHint: false, idempotentHint: false },
  taskSupport: 'optional',
  taskInput: 'before',
  strict: true,
  run: (args, context) => refund(args, context),
});

function registered(toolClass: Parameters<AgentToolRegistry['registerTool']>[0]) {
  const registry = new AgentToolRegistry();
  registry.registerTool(toolClass);
  // The entry as plain data, its lazy views included, without the class itself.
  const { toolClass: _, ...entry } = registry.get('test_refund')!;
  const { canonicalSchema, strict, strictView } = registry.get('test_refund')!;
  return { registry, entry: { ...entry, canonicalSchema, strict, strictView } };
}

describe('defineTool makes a class the registry reads as the class form', () => {
  it('gives every static member the class form declares, and nothing else', () => {
    const statics = (cls: object) =>
      Object.fromEntries(
        Object.entries(cls).map(([key, value]) => [key, typeof value === 'function' ? 'function' : value]),
      );
    expect(statics(RefundDefined)).toEqual(statics(RefundClass));
    expect(RefundDefined.getSchema()).toEqual(RefundClass.getSchema());
    expect(RefundDefined.getSchema.length).toBe(0);
    expect(RefundDefined.ToolUsageMetadata).toBe(RefundClass.ToolUsageMetadata);
    expect(RefundDefined.name).toBe('TestRefundTool');
    expect(new RefundDefined({ logger: new CapturingAdminLogger() })).toBeInstanceOf(TypedAgentTool);
  });

  it('is registered with the same entry: schema, strict view, time-out, tasks, annotations, approval, output schema', () => {
    const fromClass = registered(RefundClass).entry;
    const fromDefined = registered(RefundDefined).entry;
    expect(fromDefined).toEqual(fromClass);
    expect(fromDefined).toMatchObject({
      timeoutMs: 5_000,
      taskSupport: 'optional',
      taskInput: 'before',
      approval: 'dynamic',
      strict: true,
    });
    for (const format of ['responses', 'chat', 'mcp'] as const) {
      expect(registered(RefundDefined).registry.definitions(format)).toEqual(
        registered(RefundClass).registry.definitions(format),
      );
    }
  });

  it('writes Arguments: from the parameters when the guide leaves them out', async () => {
    const { arguments: _, ...sections } = SECTIONS;
    const Described = defineTool({
      name: 'test_described',
      description: 'Described.',
      args: Args,
      usage: sections,
      run: () => ({}),
    });
    expect(Described.ToolUsageMetadata).toContain(
      'Arguments:\n- amount (required): How much to refund.\n- note (optional): Why, in a sentence.\n\nError codes:',
    );
    const NoArguments = defineTool({
      name: 'test_no_arguments',
      description: 'Takes nothing.',
      args: Type.Object({}, { additionalProperties: false }),
      usage: sections,
      run: () => ({}),
    });
    expect(NoArguments.ToolUsageMetadata).toContain('Arguments:\n- none: send {}.\n\nError codes:');
    for (const toolClass of [Described, NoArguments])
      expect((await verifyToolContract(toolClass, { garbage: false, cancellation: false })).warnings).toEqual([]);
  });

  it('leaves out the members not given, as a class that does not declare them', () => {
    const Plain = defineTool({
      name: 'test_plain',
      description: 'Plain.',
      args: Args,
      usage: SECTIONS,
      run: () => ({}),
    });
    expect(Object.keys(Plain).sort()).toEqual(['ToolName', 'ToolUsageMetadata']);
    expect(Plain.getSchema()).not.toHaveProperty('strict');
    expect(inspectToolClass(Plain).tool).toMatchObject({
      timeoutMs: undefined,
      taskSupport: 'forbidden',
      approval: 'never',
      annotations: undefined,
      outputSchema: undefined,
    });
  });

  it('fails registration with the same violation as the class form: an invalid name, a missing description', () => {
    const violation = (toolClass: unknown) => {
      try {
        new AgentToolRegistry().registerTool(toolClass as typeof RefundClass);
      } catch (error) {
        expect(error).toBeInstanceOf(ToolContractError);
        return { code: (error as ToolContractError).code, message: (error as Error).message };
      }
      throw new Error('registered');
    };
    class BadName extends TypedAgentTool<typeof Args> {
      static readonly ToolName = 'Refund-Tool';
      static readonly ToolUsageMetadata = GUIDE;
      static getSchema() {
        return functionToolSchema(BadName.ToolName, DESCRIPTION, Args);
      }
      protected run = refund;
    }
    const DefinedBadName = defineTool({
      name: 'Refund-Tool',
      description: DESCRIPTION,
      args: Args,
      usage: SECTIONS,
      run: refund,
    });
    expect(violation(DefinedBadName).code).toBe(ContractErrorCode.TOOL_NAME_INVALID);
    expect(violation(DefinedBadName).message).toBe(violation(BadName).message.replace('(BadName)', '(RefundToolTool)'));
    const NoDescription = defineTool({
      name: 'test_refund',
      description: ' ',
      args: Args,
      usage: SECTIONS,
      run: refund,
    });
    expect(violation(NoDescription).code).toBe(ContractErrorCode.SCHEMA_SHAPE_INVALID);
    const Undescribed = defineTool({
      name: 'test_refund',
      description: DESCRIPTION,
      args: Type.Object({ x: Type.String() }),
      usage: SECTIONS,
      run: () => ({}),
    });
    expect(violation(Undescribed).code).toBe(ContractErrorCode.SCHEMA_PROPERTY_DESCRIPTION_MISSING);
  });

  it('refuses a definition with neither run nor createRun, or both, when it is made', () => {
    expect(() => defineTool({ name: 'test_x', description: 'X.', args: Args, usage: SECTIONS } as never)).toThrow(
      /needs run\(args, context, signal\) or createRun\(dependencies\), and has neither/,
    );
    expect(() =>
      defineTool({
        name: 'test_x',
        description: 'X.',
        args: Args,
        usage: SECTIONS,
        run: () => ({}),
        createRun: () => () => ({}),
      } as never),
    ).toThrow(/not both/);
  });
});

describe('calls of a defined tool', () => {
  const logger = new CapturingAdminLogger();
  const executorFor = (...tools: AnyAgentToolClass[]) => {
    const registry = new AgentToolRegistry();
    registry.registerTools(tools);
    return new AgentToolExecutor({ registry, logger, cancelGraceMs: 50 });
  };

  it('answer as the class form does: results, failures, invalid arguments, the output schema', async () => {
    for (const args of [
      '{"amount":25}',
      '{"amount":0}',
      '{"amount":-1}',
      '{"amount":"x"}',
      'not json',
      '{"amount":1,"extra":true}',
    ]) {
      const fromClass = await executorFor(RefundClass).execute('test_refund', args, testContext());
      const fromDefined = await executorFor(RefundDefined).execute('test_refund', args, testContext());
      expect(fromDefined, args).toEqual(fromClass);
    }
    expect(
      JSON.parse(
        (await executorFor(RefundDefined).execute('test_refund', '{"amount":25}', testContext())).result as string,
      ),
    ).toEqual({ refunded: 25, sessionId: 'test-session' });
  });

  it('check the declared output schema', async () => {
    const Wrong = defineTool({
      name: 'test_wrong',
      description: 'Wrong.',
      args: Args,
      usage: SECTIONS,
      outputSchema: Output,
      run: () => ({ refunded: 1, sessionId: 42 }) as never,
    });
    const result = await executorFor(Wrong).execute('test_wrong', '{"amount":1}', testContext());
    expect(result.errors[0]?.code).toBe(ExecutionErrorCode.OUTPUT_SCHEMA_MISMATCH);
  });

  it('log an exception in run and answer TOOL_EXCEPTION, as TypedAgentTool does', async () => {
    const Throwing = defineTool({
      name: 'test_throwing',
      description: 'Throws.',
      args: Args,
      usage: SECTIONS,
      run: () => {
        throw new Error('secret detail');
      },
    });
    const result = await executorFor(Throwing).execute('test_throwing', '{"amount":1}', testContext());
    expect(result).toEqual({
      successful: false,
      result: null,
      errors: [{ message: 'test_throwing failed to process arguments.', code: ExecutionErrorCode.TOOL_EXCEPTION }],
    });
    expect(logger.entries.some((entry) => entry.tag === '[test_throwing_ExecuteAsync__Exception]')).toBe(true);
  });

  it('hand run a real signal only when it declares one, and answer a cancellation with the cancelled shape', async () => {
    const seen: AbortSignal[] = [];
    const Sleeper = defineTool({
      name: 'test_sleeper',
      description: 'Sleeps until cancelled.',
      args: Type.Object({}),
      usage: SECTIONS,
      run: (_args, _context, signal) =>
        new Promise<object>((_resolve, reject) => {
          seen.push(signal);
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        }),
    });
    const Quick = defineTool({
      name: 'test_quick',
      description: 'Answers.',
      args: Type.Object({}),
      usage: SECTIONS,
      run: async () => ({ ok: true }),
    });
    expect(Sleeper.prototype).toHaveProperty('run');
    expect((Quick.prototype as unknown as { run: () => void }).run.length).toBe(0);
    const executor = executorFor(Sleeper, Quick);
    const controller = new AbortController();
    const pending = executor.execute('test_sleeper', '{}', testContext(), { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(JSON.parse((await pending).result as string)).toMatchObject({ wasCancelled: true });
    expect(seen[0]?.aborted).toBe(true);
    expect((await executor.execute('test_quick', '{}', testContext())).successful).toBe(true);
  });
});

describe('dependencies, with createRun', () => {
  interface Ledger {
    readonly record: (amount: number) => string;
  }
  const LedgerRefund = defineTool({
    name: 'test_ledger_refund',
    description: 'Records a refund in the ledger.',
    args: Args,
    usage: SECTIONS,
    createRun:
      ({ ledger }: ToolDependencies & { readonly ledger: Ledger }) =>
      ({ amount }) => ({ entry: ledger.record(amount) }),
  });

  it('reads them when the tool is built, from the factory the host gives the executor', async () => {
    const registry = new AgentToolRegistry();
    registry.registerTool(LedgerRefund);
    const ledger: Ledger = { record: (amount) => `entry-${amount}` };
    const executor = new AgentToolExecutor({
      registry,
      createTool: (toolClass, _context, logger) => new toolClass({ logger, ledger }),
    });
    expect(
      JSON.parse((await executor.execute('test_ledger_refund', '{"amount":3}', testContext())).result as string),
    ).toEqual({ entry: 'entry-3' });
  });

  it('a missing one fails building the tool (TOOL_UNAVAILABLE), as a class constructor that reads it would', async () => {
    class LedgerClass extends TypedAgentTool<typeof Args> {
      static readonly ToolName = 'test_ledger_class';
      static readonly ToolUsageMetadata = GUIDE;
      static getSchema() {
        return functionToolSchema('test_ledger_class', 'Records a refund.', Args);
      }
      readonly #ledger: Ledger;
      constructor({ logger, ledger }: ToolDependencies & { readonly ledger: Ledger }) {
        super(Args, logger);
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the test guards what the declared type rules out
        if (typeof ledger?.record !== 'function') throw new TypeError('A ledger is needed.');
        this.#ledger = ledger;
      }
      protected run({ amount }: Static<typeof Args>) {
        return { entry: this.#ledger.record(amount) };
      }
    }
    const Checked = defineTool({
      name: 'test_ledger_checked',
      description: 'Records a refund.',
      args: Args,
      usage: SECTIONS,
      createRun: ({ ledger }: ToolDependencies & { readonly ledger: Ledger }) => {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the test guards what the declared type rules out
        if (typeof ledger?.record !== 'function') throw new TypeError('A ledger is needed.');
        return ({ amount }) => ({ entry: ledger.record(amount) });
      },
    });
    const registry = new AgentToolRegistry();
    registry.registerTools([LedgerClass, Checked]);
    const executor = new AgentToolExecutor({ registry });
    const fromClass = await executor.execute('test_ledger_class', '{"amount":3}', testContext());
    const fromDefined = await executor.execute('test_ledger_checked', '{"amount":3}', testContext());
    expect(fromClass.errors[0]?.code).toBe(ExecutionErrorCode.TOOL_UNAVAILABLE);
    expect(fromDefined).toEqual({
      ...fromClass,
      errors: [
        {
          ...fromClass.errors[0]!,
          message: fromClass.errors[0]!.message.replace('test_ledger_class', 'test_ledger_checked'),
        },
      ],
    });
  });

  it('the contract kit stands in for the ones nobody provided, and names them', async () => {
    const { dependencies, standIns } = withStandIns('test_ledger_refund', { logger: new CapturingAdminLogger() });
    new LedgerRefund(dependencies as never);
    expect([...standIns]).toEqual(['ledger']);
    const report = await verifyToolContract(LedgerRefund, { cancellation: false });
    expect(report.violations).toEqual([]);
    expect(report.standIns).toEqual(['ledger']);
  });
});

describe('the contract kit on a defined tool', () => {
  it('passes it as it passes the class form, with the same schema, strict report and no warnings', async () => {
    const [fromClass, fromDefined] = await Promise.all([
      verifyToolContract(RefundClass),
      verifyToolContract(RefundDefined),
    ]);
    expect(fromDefined.violations).toEqual([]);
    expect(fromDefined.warnings).toEqual([]);
    expect(fromDefined.canonicalSchema).toBe(fromClass.canonicalSchema);
    expect(fromDefined.strict).toEqual(fromClass.strict);
    expect(fromDefined.garbage.map((run) => [run.input, run.via, run.outcome])).toEqual(
      fromClass.garbage.map((run) => [run.input, run.via, run.outcome]),
    );
  });

  it('reads the error codes in run, and warns about one the guide does not name', async () => {
    const Undocumented = defineTool({
      name: 'test_undocumented',
      description: 'Fails.',
      args: Args,
      usage: SECTIONS,
      run: () => InvokeResult.fromError('No.', 'NOT_IN_THE_GUIDE'),
    });
    const report = await verifyToolContract(Undocumented, { garbage: false });
    expect(report.warnings.map((warning) => [warning.code, /NOT_IN_THE_GUIDE/.test(warning.message)])).toEqual([
      [ContractCheckCode.USAGE_ERROR_CODE_UNDOCUMENTED, true],
    ]);
  });

  it('asks a run that declares the signal to list TIMEOUT and the cancelled shape, and runs the cancellation check', async () => {
    const Waiting = defineTool({
      name: 'test_waiting',
      description: 'Waits until cancelled.',
      args: Type.Object({}),
      usage: SECTIONS,
      run: (_args, _context, signal) =>
        new Promise<object>((resolve, reject) => {
          const timer = setTimeout(() => resolve({ waited: true }), 20);
          signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
        }),
    });
    const report = await verifyToolContract(Waiting);
    expect(report.cancellation).toMatchObject({ ran: true, successful: true });
    expect(
      report.warnings.map(
        (warning) => warning.message.match(/never names (the error code \w+|the cancelled shape)/)?.[1],
      ),
    ).toEqual(['the error code TIMEOUT', 'the cancelled shape']);
    // The same with createRun, whose run only an instance shows.
    const WaitingWithDependencies = defineTool({
      name: 'test_waiting_dependencies',
      description: 'Waits until cancelled.',
      args: Type.Object({}),
      usage: SECTIONS,
      createRun: () => (_args, _context, signal) =>
        new Promise<object>((resolve) =>
          signal.aborted ? resolve({}) : setTimeout(() => resolve({ waited: true }), 20),
        ),
    });
    const fromInstance = await verifyToolContract(WaitingWithDependencies, { garbage: false });
    expect(
      fromInstance.warnings.map(
        (warning) => warning.message.match(/never names (the error code \w+|the cancelled shape)/)?.[1],
      ),
    ).toEqual(['the error code TIMEOUT', 'the cancelled shape']);
  });
});
