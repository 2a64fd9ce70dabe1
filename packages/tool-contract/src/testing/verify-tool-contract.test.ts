import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Type, type Static, type TObject } from 'typebox';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentToolExecutionContext, ToolDependencies } from '../agent-tool.js';
import { ContractErrorCode } from '../errors.js';
import { InvokeResult } from '../invoke-result.js';
import { functionToolSchema } from '../schema.js';
import { TypedAgentTool } from '../typed-agent-tool.js';
import { usage } from '../usage.js';
import { CONTRACT_CHECK_OF, ContractCheckCode } from './codes.js';
import { POLLUTION_MARKER } from './garbage.js';
import { verifyToolContract, type ToolContractReport } from './verify-tool-contract.js';

const GUIDE = (name: string, argument: string) => usage`
  ${name} — Usage Guide

  Primary purpose:
  - Used by the contract kit's own tests.

  Rules:
  - Only in tests.

  Arguments:
  - ${argument} (required): what the test sends.

  Error codes:
  - INVALID_ARGUMENTS: the arguments are invalid.
  - TOOL_EXCEPTION: the tool failed unexpectedly.

  Good usage:
  - { "${argument}": "x" }

  Bad usage:
  - {}
`;

const TextArgs = Type.Object(
  { text: Type.String({ minLength: 1, description: 'Some text.' }) },
  { additionalProperties: false },
);

/** A tool that keeps the whole contract: the baseline each test below breaks in one way. */
class GoodTool extends TypedAgentTool<typeof TextArgs> {
  static readonly ToolName = 'kit_good';
  static readonly ToolUsageMetadata = GUIDE('kit_good', 'text');
  static getSchema() {
    return functionToolSchema(GoodTool.ToolName, 'Echoes text.', TextArgs);
  }
  constructor({ logger }: ToolDependencies) {
    super(TextArgs, logger);
  }
  protected run({ text }: Static<typeof TextArgs>) {
    return { text };
  }
}

/** Builds a TypedAgentTool class with the given parameters, name and `run`. */
function typedTool<T extends TObject>(
  name: string,
  args: T,
  run: (args: Static<T>) => unknown = () => ({ ok: true }),
  schemaOptions: { strict?: boolean } = {},
) {
  return class extends TypedAgentTool<T> {
    static readonly ToolName = name;
    static readonly ToolUsageMetadata = GUIDE(name, Object.keys(args.properties)[0] ?? 'none');
    static getSchema() {
      return functionToolSchema(name, 'A tool of the kit tests.', args, schemaOptions);
    }
    constructor({ logger }: ToolDependencies) {
      super(args, logger);
    }
    protected run(input: Static<T>) {
      return run(input) as object;
    }
  };
}

/** A hand-written tool (no TypedAgentTool) whose `execute` does what the test says. */
function plainTool(name: string, execute: (argumentsJson: string) => unknown) {
  return class {
    static readonly ToolName = name;
    static readonly ToolUsageMetadata = GUIDE(name, 'text');
    static getSchema() {
      return functionToolSchema(name, 'A hand-written tool of the kit tests.', TextArgs);
    }
    readonly name = name;
    readonly isToolFullyExecutedOnServer = true;
    execute(argumentsJson: string) {
      return execute(argumentsJson);
    }
  };
}

const codes = (findings: ToolContractReport['violations']) => findings.map((finding) => finding.code);

describe('verifyToolContract', () => {
  it('passes a tool that keeps the contract, with nothing to warn about', async () => {
    const report = await verifyToolContract(GoodTool);
    expect(report.violations).toEqual([]);
    expect(report.warnings).toEqual([]);
    expect(report).toMatchObject({
      tool: 'kit_good',
      ok: true,
      strict: { ok: true, declared: undefined, offered: true, problems: [] },
      standIns: [],
    });
    expect(report.canonicalSchema).toBe(
      JSON.stringify({
        description: 'Echoes text.',
        name: 'kit_good',
        parameters: {
          additionalProperties: false,
          properties: { text: { description: 'Some text.', minLength: 1, type: 'string' } },
          required: ['text'],
          type: 'object',
        },
        type: 'function',
      }),
    );
  });

  it('sends every garbage input both through an executor and to execute(), and each fails as the schema demands', async () => {
    const report = await verifyToolContract(GoodTool);
    const inputs = [...new Set(report.garbage.map((run) => run.input))];
    expect(inputs).toEqual(
      expect.arrayContaining([
        'invalid JSON (cut off)',
        'an empty object {}',
        "'text' of the wrong type (number 12345)",
        "a 1 MB string for 'text'",
        '10,000 nested arrays',
        'a __proto__ key',
        'constructor.prototype keys',
      ]),
    );
    expect(report.garbage).toHaveLength(inputs.length * 2);
    // A 1 MB string is a valid 'text': the schema sets no maxLength, so succeeding is right.
    for (const run of report.garbage) {
      if (run.input === "a 1 MB string for 'text'")
        expect(run).toMatchObject({ expected: 'any', outcome: 'succeeded' });
      else expect(run).toMatchObject({ expected: 'failure', outcome: 'failed', code: 'INVALID_ARGUMENTS' });
    }
  });

  it('lets {} succeed when the schema requires nothing', async () => {
    const NoArgs = typedTool(
      'kit_no_args',
      Type.Object(
        { verbose: Type.Optional(Type.Boolean({ description: 'More detail.' })) },
        { additionalProperties: false },
      ),
    );
    const report = await verifyToolContract(NoArgs);
    expect(report.violations).toEqual([]);
    expect(report.garbage.filter((run) => run.input === 'an empty object {}')).toEqual([
      { input: 'an empty object {}', via: 'executor', expected: 'any', outcome: 'succeeded' },
      { input: 'an empty object {}', via: 'execute', expected: 'any', outcome: 'succeeded' },
    ]);
  });

  it('reports every violation at once, and still runs the garbage when the tool can run', async () => {
    const Broken = typedTool(
      'Broken-Name',
      Type.Object(
        { filter: Type.Object({ from: Type.String() }, { description: 'The filter.' }) },
        { additionalProperties: true },
      ),
    );
    Object.defineProperty(Broken, 'ToolUsageMetadata', { value: '' });
    const report = await verifyToolContract(Broken);
    expect(codes(report.violations)).toEqual([
      ContractErrorCode.TOOL_NAME_INVALID,
      ContractErrorCode.USAGE_METADATA_MISSING,
      ContractErrorCode.SCHEMA_PROPERTY_DESCRIPTION_MISSING,
      ContractCheckCode.STRICT_MODE_REJECTED,
    ]);
    expect(report.ok).toBe(false);
    expect(report.garbage.length).toBeGreaterThan(0);
  });

  it('wants a description on nested parameters too, naming each by its path', async () => {
    const Nested = typedTool(
      'kit_nested',
      Type.Object(
        {
          filter: Type.Object(
            { from: Type.String(), to: Type.String({ description: 'End.' }) },
            { description: 'The filter.', additionalProperties: false },
          ),
          tags: Type.Array(Type.Object({ label: Type.String() }, { additionalProperties: false }), {
            description: 'Tags.',
          }),
          top: Type.String(),
        },
        { additionalProperties: false },
      ),
    );
    const report = await verifyToolContract(Nested);
    const messages = report.violations
      .filter((finding) => finding.code === ContractErrorCode.SCHEMA_PROPERTY_DESCRIPTION_MISSING)
      .map((finding) => finding.message);
    expect(messages).toHaveLength(3);
    expect(messages[0]).toMatch(/parameter 'top' has no description/);
    expect(messages[1]).toMatch(
      /parameter 'filter\.from' has no description; the model reads every field's description, nested ones too/,
    );
    expect(messages[2]).toMatch(/parameter 'tags\[\]\.label' has no description/);
  });

  describe('OpenAI strict mode', () => {
    const Open = Type.Object({ text: Type.String({ description: 'Text.' }) }, { additionalProperties: true });

    it('is a violation when strict mode cannot take the schema and the tool does not opt out', async () => {
      const report = await verifyToolContract(typedTool('kit_open', Open));
      expect(codes(report.violations)).toEqual([ContractCheckCode.STRICT_MODE_REJECTED]);
      expect(report.violations[0]!.message).toMatch(
        /open objects .* are not supported in strict mode.*does not declare strict: false. Fix: .*\{ strict: false \}/,
      );
      expect(report.strict).toMatchObject({ ok: false, declared: undefined, offered: false });
    });

    it('accepts strict: false, and the report says why strict mode would fail', async () => {
      const report = await verifyToolContract(typedTool('kit_open_opted_out', Open, undefined, { strict: false }));
      expect(report.violations).toEqual([]);
      expect(report.strict).toEqual({
        ok: false,
        declared: false,
        offered: false,
        problems: [
          "parameters: open objects ('additionalProperties' other than false) are not supported in strict mode",
        ],
        relaxed: [],
      });
    });

    it('is a violation to declare strict: true on a schema strict mode refuses', async () => {
      const report = await verifyToolContract(typedTool('kit_open_strict', Open, undefined, { strict: true }));
      expect(report.violations.map((finding) => finding.message)).toEqual([
        expect.stringMatching(/it declares strict: true, so OpenAI would refuse the request/),
      ]);
    });

    it('warns about an opt-out strict mode does not need', async () => {
      const report = await verifyToolContract(
        typedTool('kit_needless_opt_out', TextArgs, undefined, { strict: false }),
      );
      expect(report.violations).toEqual([]);
      expect(codes(report.warnings)).toEqual([ContractCheckCode.STRICT_OPT_OUT_UNNEEDED]);
    });
  });

  it('warns, without failing, about usage metadata that misses AGN-005 §7.2.2 sections or an argument', async () => {
    const Terse = typedTool('kit_terse', TextArgs);
    Object.defineProperty(Terse, 'ToolUsageMetadata', { value: 'Primary purpose: echo.\nRules: none.' });
    const report = await verifyToolContract(Terse);
    expect(report.ok).toBe(true);
    expect(report.warnings.map((finding) => `${finding.code} ${finding.message}`)).toEqual([
      'USAGE_TITLE_MISSING ToolUsageMetadata of kit_terse does not open with "kit_terse — Usage Guide". Fix: make that its first line.',
      expect.stringMatching(/^USAGE_SECTION_MISSING .*no "Arguments:" section/),
      expect.stringMatching(/^USAGE_SECTION_MISSING .*no "Error codes:" section/),
      expect.stringMatching(/^USAGE_SECTION_MISSING .*no "Good usage:" section/),
      expect.stringMatching(/^USAGE_SECTION_MISSING .*no "Bad usage:" section/),
      expect.stringMatching(/^USAGE_ARGUMENT_UNDOCUMENTED .*never mentions its argument 'text'/),
      expect.stringMatching(
        /^USAGE_ERROR_CODE_UNDOCUMENTED ToolUsageMetadata of kit_terse never names the error code INVALID_ARGUMENTS, which TypedAgentTool returns for it/,
      ),
      expect.stringMatching(/^USAGE_ERROR_CODE_UNDOCUMENTED .*never names the error code TOOL_EXCEPTION/),
    ]);
  });

  it('names a missing section by the heading the docs use ("Rules:"), with no record code a user cannot look up', async () => {
    const NoRules = typedTool('kit_no_rules', TextArgs);
    Object.defineProperty(NoRules, 'ToolUsageMetadata', {
      value:
        'kit_no_rules — Usage Guide\n\nPrimary purpose:\n- echo.\n\nArguments:\n- text.\n\nError ' +
        'codes:\n- INVALID_ARGUMENTS, TOOL_EXCEPTION: as for every tool.\n\nGood usage:\n- x\n\nBad usage:\n- y',
    });
    const report = await verifyToolContract(NoRules);
    expect(report.warnings.map((finding) => finding.message)).toEqual([
      'ToolUsageMetadata of kit_no_rules has no "Rules:" section. Fix: add a "Rules:" line and its points, so the Reasoner shows every tool\'s guidance the same way.',
    ]);
    expect(JSON.stringify(report)).not.toMatch(/(TUL|AGN)-\d{3}/);
  });

  describe('error codes in the usage guide (AGN-005 §7.2.1)', () => {
    class Coded extends TypedAgentTool<typeof TextArgs> {
      static readonly ToolName: string = 'kit_coded';
      static readonly ToolUsageMetadata = GUIDE('kit_coded', 'text');
      static getSchema() {
        return functionToolSchema(Coded.ToolName, 'Refuses some text.', TextArgs);
      }
      constructor({ logger }: ToolDependencies) {
        super(TextArgs, logger);
      }
      protected run({ text }: Static<typeof TextArgs>) {
        if (text === 'a') return InvokeResult.fromError(`${this.name} refuses "a".`, 'TEXT_REFUSED');
        if (text === 'b') return InvokeResult.fromError('Too long.', ContractErrorCode.TIMEOUT_INVALID);
        return { text };
      }
    }

    it("warns about each code the tool's source returns that its guide never names", async () => {
      const report = await verifyToolContract(Coded, { garbage: false });
      expect(report.ok).toBe(true);
      expect(report.warnings.map((finding) => finding.message)).toEqual([
        'ToolUsageMetadata of kit_coded never names the error code TIMEOUT_INVALID, which its ' +
          'source returns. Fix: list it under "Error codes:" with what it means and what to do (see ' +
          '"A usage guide" in docs/rules.md).',
        expect.stringContaining('never names the error code TEXT_REFUSED, which its source returns'),
      ]);
    });

    it('is satisfied once the guide lists them, and asks a tool that takes the signal for TIMEOUT and the cancelled shape', async () => {
      const listed = (name: string) =>
        `${GUIDE(name, 'text')}\n- TEXT_REFUSED: the text was "a".\n- TIMEOUT_INVALID: never, in truth.`;
      const Listed = class extends Coded {
        static override readonly ToolName = 'kit_listed';
        static override readonly ToolUsageMetadata = listed('kit_listed');
        static override getSchema() {
          return functionToolSchema('kit_listed', 'Refuses some text.', TextArgs);
        }
      };
      // The codes are found in the parent class's source too.
      expect((await verifyToolContract(Listed, { garbage: false })).warnings).toEqual([]);
      const Waiting = class extends TypedAgentTool<typeof TextArgs> {
        static readonly ToolName = 'kit_waiting';
        static readonly ToolUsageMetadata = listed('kit_waiting');
        static getSchema() {
          return functionToolSchema('kit_waiting', 'Waits.', TextArgs);
        }
        constructor({ logger }: ToolDependencies) {
          super(TextArgs, logger);
        }
        protected run(_args: Static<typeof TextArgs>, _context: AgentToolExecutionContext, _signal: AbortSignal) {
          return { ok: true };
        }
      };
      expect(
        (await verifyToolContract(Waiting, { garbage: false })).warnings.map((finding) => finding.message),
      ).toEqual([
        expect.stringContaining(
          'never names the error code TIMEOUT, which a tool that takes the AbortSignal can answer',
        ),
        expect.stringContaining('never names the cancelled shape (a successful result with "wasCancelled": true)'),
      ]);
    });
  });

  describe('cancellation', () => {
    const WaitArgs = Type.Object(
      { text: Type.String({ minLength: 2, description: 'Some text.' }) },
      { additionalProperties: false },
    );
    const waitingTool = (name: string, run: (signal: AbortSignal) => Promise<object>) =>
      class extends TypedAgentTool<typeof WaitArgs> {
        static readonly ToolName = name;
        static readonly ToolUsageMetadata = GUIDE(name, 'text');
        static getSchema() {
          return functionToolSchema(name, 'Waits.', WaitArgs);
        }
        constructor({ logger }: ToolDependencies) {
          super(WaitArgs, logger);
        }
        protected run(_args: Static<typeof WaitArgs>, _context: AgentToolExecutionContext, signal: AbortSignal) {
          return run(signal);
        }
      };

    it('finds a tool that takes the signal but does not settle after an abort', async () => {
      const Deaf = waitingTool('kit_deaf', () => new Promise<object>(() => {}));
      const report = await verifyToolContract(Deaf, { cancelGraceMs: 20, garbage: false });
      expect(codes(report.violations)).toEqual([ContractCheckCode.CANCELLATION_NOT_SETTLED]);
      expect(report.violations[0]!.message).toBe(
        'Tool "kit_deaf" takes the AbortSignal, but did not settle within 20 ms after its call ' +
          '(arguments {"text":"xx"}) was cancelled: a host cannot tell whether its effect happened, ' +
          'and answers OUTCOME_UNKNOWN. ' +
          'Fix: pass the signal to everything the tool waits on, and return (or reject with the ' +
          'AbortError) soon after it aborts; see "Cancellation, time-outs and honest outcomes" in ' +
          'docs/tool-packages.md.',
      );
      expect(report.cancellation).toEqual({
        ran: true,
        arguments: '{"text":"xx"}',
        successful: false,
        code: 'OUTCOME_UNKNOWN',
      });
    });

    it('passes a tool that stops on its signal, with the arguments its author gives', async () => {
      const Listening = waitingTool(
        'kit_listening',
        (signal) =>
          new Promise<object>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      );
      const report = await verifyToolContract(Listening, {
        cancelGraceMs: 60_000,
        cancellationArguments: { text: 'hello' },
        garbage: false,
      });
      expect(report.violations).toEqual([]);
      expect(report.cancellation).toEqual({ ran: true, arguments: '{"text":"hello"}', successful: true });
    });

    it('skips a tool that does not take the signal, and says so', async () => {
      expect((await verifyToolContract(GoodTool)).cancellation).toEqual({ ran: false, reason: 'no-signal' });
    });
  });

  describe('garbage arguments', () => {
    it('catches an execute() that throws on garbage (the executor, which validates first, hides it)', async () => {
      const Throwing = plainTool('kit_throwing', (json) =>
        InvokeResult.create(JSON.stringify({ upper: (JSON.parse(json) as { text: string }).text.toUpperCase() })),
      );
      const report = await verifyToolContract(Throwing);
      expect(codes(report.violations)).toEqual([ContractCheckCode.GARBAGE_THREW, ContractCheckCode.GARBAGE_ACCEPTED]);
      expect(report.violations[0]!.message).toMatch(
        new RegExp(
          String.raw`^Tool "kit_throwing" threw instead of returning a failed InvokeResult via its own ` +
            String.raw`execute\(\), on \d+ garbage inputs \(invalid JSON \(cut off\); .*First: SyntaxError: .* ` +
            String.raw`Fix: never throw from execute`,
        ),
      );
      // JSON.parse keeps a __proto__ key as plain data, and the tool never looks: only the schema refuses it.
      expect(report.violations[1]!.message).toMatch(
        /returned a successful result for arguments its schema refuses via its own execute\(\), on 1 garbage input \(a __proto__ key beside 'text'\)/,
      );
      expect(
        report.garbage
          .filter((run) => run.via === 'executor')
          .every((run) => run.outcome === 'failed' || run.outcome === 'succeeded'),
      ).toBe(true);
    });

    it('catches a tool that accepts what its schema refuses', async () => {
      const Lenient = typedTool('kit_lenient', TextArgs);
      Object.defineProperty(Lenient.prototype, 'decode', { value: (input: unknown) => ({ ok: true, value: input }) });
      const report = await verifyToolContract(Lenient);
      expect(codes(report.violations)).toEqual([
        ContractCheckCode.GARBAGE_ACCEPTED,
        ContractCheckCode.GARBAGE_ACCEPTED,
      ]);
      expect(report.violations[0]!.message).toMatch(
        /returned a successful result for arguments its schema refuses via an AgentToolExecutor/,
      );
      expect(report.violations[1]!.message).toMatch(/via its own execute\(\)/);
    });

    it('catches malformed results, and results the executor had to replace', async () => {
      const Sloppy = plainTool('kit_sloppy', () => ({ ok: false }));
      const report = await verifyToolContract(Sloppy);
      expect(report.violations.map((finding) => finding.message)).toEqual([
        expect.stringMatching(
          /via its own execute\(\), on \d+ garbage inputs .*First: 'successful' is undefined, not a boolean/,
        ),
        expect.stringMatching(
          /via an AgentToolExecutor, on 1 garbage input \(a 1 MB string for 'text'\)\. First: the executor replaced it: "kit_sloppy returned a malformed result\."/,
        ),
      ]);
      expect(codes(report.violations)).toEqual([
        ContractCheckCode.GARBAGE_MALFORMED_RESULT,
        ContractCheckCode.GARBAGE_MALFORMED_RESULT,
      ]);
    });

    it("catches a failure that echoes the garbage into the model's context", async () => {
      const Echoing = plainTool('kit_echoing', (json) => InvokeResult.fromError(`Bad arguments: ${json}`));
      const report = await verifyToolContract(Echoing);
      expect(report.violations.map((finding) => finding.message)).toEqual([
        expect.stringMatching(
          /^Tool "kit_echoing" returned failure messages longer than 16384 characters via an AgentToolExecutor, on 1 garbage input \(a 1 MB string for 'text'\)/,
        ),
        expect.stringMatching(
          new RegExp(
            String.raw`returned failure messages longer than 16384 characters via its own execute\(\), on 6 ` +
              String.raw`garbage inputs \(a 1 MB string for 'text'; a 1 MB string as the whole arguments; a 1 MB ` +
              String.raw`unterminated string; 10,000 nested arrays; and 2 more\)`,
          ),
        ),
      ]);
    });

    it('gives up on a tool that never answers', async () => {
      const Hanging = plainTool('kit_hanging', () => new Promise(() => {}));
      const report = await verifyToolContract(Hanging, { callTimeoutMs: 20 });
      expect(codes(report.violations)).toEqual([
        ContractCheckCode.GARBAGE_TIMED_OUT,
        ContractCheckCode.GARBAGE_TIMED_OUT,
      ]);
      expect(report.garbage.filter((run) => run.via === 'execute').every((run) => run.outcome === 'timed-out')).toBe(
        true,
      );
    });

    it('catches prototype pollution, names what changed, and puts the prototype back', async () => {
      const merge = (target: Record<string, unknown>, source: Record<string, unknown>) => {
        for (const key of Object.keys(source)) {
          const value = source[key];
          if (value !== null && typeof value === 'object')
            merge((target[key] ??= {}) as Record<string, unknown>, value as Record<string, unknown>);
          else target[key] = value;
        }
      };
      const Merging = plainTool('kit_merging', (json) => {
        const options: Record<string, unknown> = {};
        try {
          merge(options, JSON.parse(json) as Record<string, unknown>);
        } catch {
          return InvokeResult.fromError('Invalid arguments.', 'INVALID_ARGUMENTS');
        }
        return InvokeResult.fromError('Nothing to do.', 'INVALID_ARGUMENTS');
      });
      const report = await verifyToolContract(Merging);
      expect(report.violations.map((finding) => finding.message)).toEqual([
        `Tool "kit_merging" changed Object.prototype.${POLLUTION_MARKER} (added) while handling a ` +
          `__proto__ key (via its own execute()): an attacker-controlled key reached a prototype. ` +
          `Fix: never merge or assign arguments key by key into objects; read the validated arguments ` +
          `only (the kit restored the prototype).`,
        expect.stringMatching(
          /changed Object\.prototype\.aptixContractPolluted \(added\) while handling constructor\.prototype keys \(via its own execute\(\)\)/,
        ),
        expect.stringMatching(
          /changed Object\.prototype\.aptixContractPolluted \(added\) while handling a __proto__ key inside 'text' \(via its own execute\(\)\)/,
        ),
        expect.stringMatching(
          /changed Object\.prototype\.aptixContractPolluted \(added\) while handling a __proto__ key in an array in 'text' \(via its own execute\(\)\)/,
        ),
        expect.stringMatching(
          /changed Object\.prototype\.aptixContractPolluted \(added\) while handling a __proto__ key beside 'text' \(via its own execute\(\)\)/,
        ),
      ]);
      expect(POLLUTION_MARKER in {}).toBe(false);
    });
  });

  describe('dependencies', () => {
    class Clock {
      now = () => 0;
    }
    const Args = Type.Object(
      { zone: Type.Optional(Type.String({ description: 'A time zone.' })) },
      { additionalProperties: false },
    );
    class ClockTool extends TypedAgentTool<typeof Args> {
      static readonly ToolName = 'kit_clock';
      static readonly ToolUsageMetadata = GUIDE('kit_clock', 'zone');
      static getSchema() {
        return functionToolSchema(ClockTool.ToolName, 'Tells the time.', Args);
      }
      readonly #clock: Clock;
      constructor(deps: ToolDependencies & { clock: Clock }) {
        super(Args, deps.logger);
        if (!(deps.clock instanceof Clock)) throw new TypeError('ClockTool requires a Clock.');
        this.#clock = deps.clock;
      }
      protected run(_args: Static<typeof Args>, context: AgentToolExecutionContext) {
        return { now: this.#clock.now(), sessionId: context.sessionId ?? null };
      }
    }

    it('says how to provide a dependency the stand-in cannot replace', async () => {
      const report = await verifyToolContract(ClockTool);
      expect(report.violations).toEqual([
        {
          code: ContractCheckCode.TOOL_NOT_CONSTRUCTIBLE,
          message: expect.stringMatching(
            /^Tool "kit_clock" could not be built to run garbage arguments: TypeError: ClockTool requires a Clock\. It was given stand-ins for: clock\. Fix: give the kit its dependencies/,
          ),
        },
      ]);
      expect(report.garbage).toEqual([]);
    });

    it('builds the tool with the dependencies given, or with createTool', async () => {
      expect((await verifyToolContract(ClockTool, { dependencies: { clock: new Clock() } })).violations).toEqual([]);
      let built = 0;
      const report = await verifyToolContract(ClockTool, {
        createTool: (toolClass, { logger }) => {
          built++;
          return new toolClass({ logger, clock: new Clock() });
        },
      });
      expect(report.violations).toEqual([]);
      expect(built).toBeGreaterThan(report.garbage.length / 2);
    });

    it('warns when valid arguments reach a stand-in, and names it', async () => {
      const Catalog = Type.Object({}, { additionalProperties: false });
      class CatalogTool extends TypedAgentTool<typeof Catalog> {
        static readonly ToolName = 'kit_catalog';
        static readonly ToolUsageMetadata = GUIDE('kit_catalog', 'none');
        static getSchema() {
          return functionToolSchema(CatalogTool.ToolName, 'Lists the catalog.', Catalog);
        }
        readonly #catalog: { list(): Promise<string[]> };
        constructor(deps: ToolDependencies & { catalog: { list(): Promise<string[]> } }) {
          super(Catalog, deps.logger);
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the test guards what the declared type rules out
          if (typeof deps.catalog?.list !== 'function') throw new TypeError('CatalogTool requires a catalog.');
          this.#catalog = deps.catalog;
        }
        protected async run() {
          return { items: await this.#catalog.list() };
        }
      }
      const report = await verifyToolContract(CatalogTool);
      expect(report.violations).toEqual([]);
      expect(report.standIns).toEqual(['catalog']);
      expect(report.warnings).toEqual([
        {
          code: ContractCheckCode.VALID_ARGUMENTS_THREW,
          message: expect.stringMatching(
            new RegExp(
              String.raw`^Tool "kit_catalog" threw on arguments its schema accepts \(caught as TOOL_EXCEPTION\) via ` +
                String.raw`an AgentToolExecutor, on 1 garbage input \(an empty object \{\}\)\. First: the executor ` +
                String.raw`caught "kit_catalog called catalog\.list\(\), but 'catalog' is a stand-in: .*It was given ` +
                String.raw`stand-ins for: catalog\.`,
            ),
          ),
        },
        expect.objectContaining({
          code: ContractCheckCode.VALID_ARGUMENTS_THREW,
          message: expect.stringMatching(/via its own execute\(\)/),
        }),
      ]);
    });
  });

  describe('the schema in separate Node processes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aptix-kit-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const write = (name: string, source: string) => {
      const file = join(dir, name);
      writeFileSync(file, source);
      return file;
    };
    const toolSource = (description: string) => `
      const loadedAt = process.pid;
      export class ProcessTool {
        static ToolName = 'kit_process';
        static getSchema() {
          return { type: 'function', name: 'kit_process', description: ${description}, parameters: { type: 'object', properties: {}, required: [] } };
        }
      }
    `;

    it('passes a schema built from constants', async () => {
      const file = write('stable.mjs', toolSource("'Stable.'"));
      const { ProcessTool } = (await import(pathToFileURL(file).href)) as { ProcessTool: unknown };
      const report = await verifyToolContract(ProcessTool, { modulePath: file, garbage: false });
      expect(
        report.violations.filter(
          (finding) =>
            finding.code === ContractCheckCode.SCHEMA_DIFFERS_ACROSS_PROCESSES ||
            finding.code === ContractCheckCode.SCHEMA_PROCESS_FAILED,
        ),
      ).toEqual([]);
    });

    it('catches a schema fixed when the module loads, with the difference', async () => {
      const file = write('unstable.mjs', toolSource('`Loaded by process ${loadedAt}.`'));
      const { ProcessTool } = (await import(pathToFileURL(file).href)) as { ProcessTool: unknown };
      const report = await verifyToolContract(ProcessTool, { modulePath: file, garbage: false });
      const found = report.violations.filter(
        (finding) => finding.code === ContractCheckCode.SCHEMA_DIFFERS_ACROSS_PROCESSES,
      );
      expect(found).toHaveLength(1);
      expect(found[0]!.message).toMatch(
        new RegExp(
          `^Tool "kit_process": getSchema\\(\\) gives a different schema in 2 of 2 separate Node ` +
            `processes \\(description: "Loaded by process ${process.pid}\\." → "Loaded by process ` +
            `\\d+\\."\\)\\. Schemas must be built from constants only`,
        ),
      );
    });

    it('compares the declared output schema across processes too, and keeps it in the canonical schema the snapshot records', async () => {
      const source = (title: string) => `
        ${toolSource("'Stable.'")}
        ProcessTool.OutputSchema = { type: 'object', title: ${title}, properties: {} };
      `;
      const stable = write('output-stable.mjs', source("'Out.'"));
      const { ProcessTool: Stable } = (await import(pathToFileURL(stable).href)) as { ProcessTool: unknown };
      const good = await verifyToolContract(Stable, { modulePath: stable, garbage: false });
      expect(
        good.violations.filter((finding) => finding.code === ContractCheckCode.SCHEMA_DIFFERS_ACROSS_PROCESSES),
      ).toEqual([]);
      expect(JSON.parse(good.canonicalSchema!).outputSchema).toEqual({ properties: {}, title: 'Out.', type: 'object' });
      const unstable = write('output-unstable.mjs', source('`Out ${loadedAt}.`'));
      const { ProcessTool: Unstable } = (await import(pathToFileURL(unstable).href)) as { ProcessTool: unknown };
      const bad = await verifyToolContract(Unstable, { modulePath: unstable, garbage: false });
      expect(
        bad.violations.find((finding) => finding.code === ContractCheckCode.SCHEMA_DIFFERS_ACROSS_PROCESSES)?.message,
      ).toMatch(/outputSchema\.title: "Out \d+\." → "Out \d+\."/);
    });

    it('reports an invalid output schema under the rules, naming the tool and the fix', async () => {
      const file = write(
        'output-invalid.mjs',
        `${toolSource("'Stable.'")}\nProcessTool.OutputSchema = { type: 'object', properties: { n: { type: 'float' } } };`,
      );
      const { ProcessTool } = (await import(pathToFileURL(file).href)) as { ProcessTool: unknown };
      const report = await verifyToolContract(ProcessTool, { garbage: false });
      expect(report.violations).toContainEqual({
        code: ContractErrorCode.OUTPUT_SCHEMA_INVALID,
        message: expect.stringMatching(
          /^Tool "kit_process" \(ProcessTool\) breaks the tool contract: OutputSchema is not a valid JSON Schema: .*Fix: declare it with TypeBox/,
        ),
      });
      expect(CONTRACT_CHECK_OF[ContractErrorCode.OUTPUT_SCHEMA_INVALID]).toBe('rules');
    });

    it('reports a module that cannot be imported on its own', async () => {
      const file = write('broken.mjs', `import './missing.mjs';\n${toolSource("'x'")}`);
      const report = await verifyToolContract(GoodTool, { modulePath: file, garbage: false });
      expect(report.violations).toEqual([
        {
          code: ContractCheckCode.SCHEMA_PROCESS_FAILED,
          message: expect.stringMatching(
            new RegExp(
              String.raw`reading its schema in a separate Node process failed: A separate Node process importing ` +
                String.raw`.*broken\.mjs exited with code 1: Error \[ERR_MODULE_NOT_FOUND\]: Cannot find module ` +
                String.raw`'.*missing\.mjs'`,
            ),
          ),
        },
      ]);
    });
  });
});

describe('verifyToolContract on what is not a tool at all', () => {
  it('reports the rules, and runs nothing it cannot run', async () => {
    const instance = await verifyToolContract({ execute() {} });
    expect(instance).toMatchObject({
      tool: '(unknown)',
      ok: false,
      canonicalSchema: undefined,
      garbage: [],
      strict: { ok: false, problems: ['the schema could not be read'] },
    });
    expect(instance.violations.map((finding) => finding.code)).toEqual([ContractErrorCode.NOT_A_CLASS]);

    class Shapeless {
      static readonly ToolName = 'kit_shapeless';
      static readonly ToolUsageMetadata = 'kit_shapeless — Usage Guide';
      static getSchema() {
        return {
          type: 'function',
          name: 'kit_shapeless',
          description: 'No shape.',
          parameters: { type: 'object', properties: null, required: [] },
        };
      }
      async execute() {
        return InvokeResult.create('{}');
      }
    }
    const shapeless = await verifyToolContract(Shapeless);
    expect(shapeless.violations.map((finding) => finding.code)).toEqual([ContractErrorCode.SCHEMA_SHAPE_INVALID]);
    expect(shapeless.garbage).toEqual([]);
  });
});
