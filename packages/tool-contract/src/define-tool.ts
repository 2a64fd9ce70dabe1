import type { Static, TObject, TSchema } from 'typebox';
import type {
  AgentToolExecutionContext,
  TaskInput,
  TaskSupport,
  ToolAnnotations,
  ToolDependencies,
} from './agent-tool.js';
import type { ApprovalPolicy } from './approval.js';
import { ExecutionErrorCode } from './errors.js';
import type { InvokeResult } from './invoke-result.js';
import { functionToolSchema, type FunctionToolSchema, type ObjectSchemaLike } from './schema.js';
import { TypedAgentTool } from './typed-agent-tool.js';
import { usageGuide, usageItems, type UsageGuideSections } from './usage-guide.js';

/**
 * Where a class made by {@link defineTool} keeps the function its calls run (`run`, or `createRun`),
 * so the contract kit can read the error codes in its source as it reads a class's. A global symbol:
 * a kit from another copy of this package finds it too. @internal
 */
export const definedFrom: unique symbol = Symbol.for('@aptix/tool-contract/defined-from') as never;

/** What `run` returns: its result (the `outputSchema`'s type, when there is one), or an InvokeResult of its own. */
export type ToolRunOutput<TResult = object> = TResult | InvokeResult<string>;

/** The type of a tool's result: what its `outputSchema` describes, or any object. */
export type ToolResultOf<TOutput> = [TOutput] extends [TSchema] ? Static<TOutput> : object;

/**
 * A defined tool's work, on arguments already validated against `args`: `run(args, context, signal)`,
 * as `TypedAgentTool.run`. Declare `signal` to be told of cancellations and time-outs (a `run` without
 * it gets a shared signal that never aborts, and costs no AbortSignal per call).
 */
export type ToolRun<TArgs extends TObject, TResult = object> = (
  this: void,
  args: Static<TArgs>,
  context: AgentToolExecutionContext,
  signal: AbortSignal,
) => ToolRunOutput<TResult> | Promise<ToolRunOutput<TResult>>;

/**
 * A defined tool's usage guide: the sections of {@link UsageGuideSections}, where `arguments` may be left
 * out to list each parameter with its schema description.
 */
export type ToolUsageFields = Omit<UsageGuideSections, 'arguments'> & {
  readonly arguments?: UsageGuideSections['arguments'];
};

/** What {@link defineTool} takes besides `run` or `createRun`: each field is a static member of the class form. */
export interface ToolDefinitionFields<
  TName extends string,
  TArgs extends TObject,
  TOutput extends ObjectSchemaLike | undefined,
> {
  /** `ToolName`: lowercase_snake_case, at most 64 characters. The registry checks it, as a class's. */
  readonly name: TName;
  /** The schema's `description`: one sentence saying what the tool does; models choose tools by it. */
  readonly description: string;
  /** The parameters, a TypeBox object: the schema models see, what calls are validated against, and the type of `run`'s arguments. */
  readonly args: TArgs;
  /** `ToolUsageMetadata`, as its sections (a missing one does not compile). See {@link defineTool} for what is filled in. */
  readonly usage: ToolUsageFields;
  /** `Modes`: the modes whose sessions offer this tool, by key. */
  readonly modes?: readonly string[];
  /** `ApprovalPolicy`: `'always'`, `'never'`, or a function of the validated arguments and the context. */
  readonly approval?: ApprovalPolicy<Static<TArgs>>;
  /** `TimeoutMs`: this tool's own time-out, in milliseconds. */
  readonly timeoutMs?: number;
  /** `OutputSchema`: the shape of every successful result (an object schema); it also types what `run` returns. */
  readonly outputSchema?: TOutput;
  /** `ToolAnnotations`: MCP hints; `{ readOnlyHint: true }` for a tool that changes nothing. */
  readonly annotations?: ToolAnnotations;
  /** `TaskSupport`: whether a call may run as an MCP task. */
  readonly taskSupport?: TaskSupport;
  /** `TaskInput`, with `taskSupport`: when a task's questions are asked. */
  readonly taskInput?: TaskInput;
  /** `strict` in the schema: `false` opts out of OpenAI strict mode (say why in the guide); left out, the host decides from the schema. */
  readonly strict?: boolean;
}

/** How a defined tool runs: `run` alone, or `createRun`, which gets the dependencies when the tool is built. */
export type ToolRunner<TArgs extends TObject, TDeps extends ToolDependencies, TResult> =
  | {
      /** The tool's work. */
      readonly run: ToolRun<TArgs, TResult>;
      readonly createRun?: never;
    }
  | {
      /**
       * For a tool that needs dependencies from the host (`createDependencies`, the host's container):
       * called with them when the tool is built, where a class's constructor reads them, and returns the
       * tool's `run`. Annotate the parameter: `({ weatherClient }: ToolDependencies & { weatherClient: WeatherClient }) => async (args, context) => …`.
       */
      readonly createRun: (dependencies: TDeps) => ToolRun<TArgs, TResult>;
      readonly run?: never;
    };

/** The argument of {@link defineTool}. */
export type ToolDefinition<
  TName extends string,
  TArgs extends TObject,
  TDeps extends ToolDependencies = ToolDependencies,
  TOutput extends ObjectSchemaLike | undefined = undefined,
> = ToolDefinitionFields<TName, TArgs, TOutput> & ToolRunner<TArgs, TDeps, ToolResultOf<TOutput>>;

/** The class {@link defineTool} makes: a `TypedAgentTool` with the static side of the contract. */
export interface DefinedTool<
  TName extends string = string,
  TArgs extends TObject = TObject,
  TDeps extends ToolDependencies = ToolDependencies,
> {
  new (dependencies: TDeps): TypedAgentTool<TArgs>;
  readonly prototype: TypedAgentTool<TArgs>;
  readonly ToolName: TName;
  readonly ToolUsageMetadata: string;
  getSchema(): FunctionToolSchema;
  readonly Modes?: readonly string[];
  readonly ApprovalPolicy?: ApprovalPolicy<Static<TArgs>>;
  readonly TimeoutMs?: number;
  readonly OutputSchema?: ObjectSchemaLike;
  readonly ToolAnnotations?: ToolAnnotations;
  readonly TaskSupport?: TaskSupport;
  readonly TaskInput?: TaskInput;
}

/**
 * Codes every defined tool can return whatever its `run` does (TypedAgentTool's), and those of an
 * approval gate: added to the guide's error codes when it does not name them, so the model is told.
 */
const BASE_CODES: ReadonlyArray<readonly [code: string, text: string, whenGated: boolean]> = [
  [
    ExecutionErrorCode.INVALID_ARGUMENTS,
    'the arguments do not match the schema; the message says which. Correct them and call again.',
    false,
  ],
  [
    ExecutionErrorCode.APPROVAL_DENIED,
    'a person declined the call; nothing was done. Tell the user; do not call again for the same request.',
    true,
  ],
  [
    ExecutionErrorCode.APPROVAL_EXPIRED,
    'nobody decided in time; nothing was done. Ask the user whether to request it again.',
    true,
  ],
  [
    ExecutionErrorCode.TOOL_EXCEPTION,
    'the tool failed unexpectedly. Tell the user; do not retry more than once.',
    false,
  ],
];

/** `- name (required): description` for each parameter, as the first-party guides list them; `(optional)` for one not required. */
function describeArguments(args: ObjectSchemaLike | undefined): [string, ...string[]] | undefined {
  const properties = args?.properties;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (properties === null || typeof properties !== 'object') return undefined; // no schema: the registry says so
  const required = new Set(Array.isArray(args!.required) ? args!.required : []);
  const lines = Object.entries(properties).map(
    ([key, schema]) =>
      `${key} (${required.has(key) ? 'required' : 'optional'}): ${String((schema as { description?: unknown } | null)?.description ?? '')}`,
  );
  return lines.length === 0 ? [NO_ARGUMENTS] : (lines as [string, ...string[]]);
}

/** The `Arguments:` of a tool that takes none: the section is still there, as the guide's format asks. */
const NO_ARGUMENTS = 'none: send {}.';

/** A static member as `static X = value` defines it. */
function defineStatic(target: object, key: string, value: unknown): void {
  if (value !== undefined)
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** `acme_convert_temperature` → `AcmeConvertTemperatureTool`: the class's name, in the registry's messages. */
function className(name: string): string {
  const words = String(name)
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return `${words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')}Tool`;
}

/**
 * Defines a tool in one call: the function form of a `TypedAgentTool` subclass. It returns a class
 * (export it and list it in `tools` as any other), whose static members come from the fields, so the
 * registry's rules, the contract kit, schema snapshots, the strict-mode report and the adapters treat it
 * as the class form. An invalid name or schema fails registration with the same violation.
 *
 * The usage guide is written from its sections (see {@link usageGuide}). Without `arguments`, its
 * `Arguments:` list each parameter with its description, which the contract requires anyway
 * (`- value (required): …`, `- precision (optional): …`). Its error codes get a line for each code
 * TypedAgentTool returns that they do not name (`INVALID_ARGUMENTS`, `TOOL_EXCEPTION`) and, for a tool
 * with an approval policy, `APPROVAL_DENIED` and `APPROVAL_EXPIRED`; name a code yourself to say it your
 * way. A `run` that declares `signal` should list `TIMEOUT` and the cancelled shape.
 *
 * Keep the class form for what this does not cover: a `decode` or `failureMessage` override, an
 * `execute` of your own (`ReleasesSignal`), a client-executed tool.
 *
 * @example
 * export const HelloWorldTool = defineTool({
 *   name: 'agent_hello_world',
 *   description: "Creates a friendly greeting using the user's name.",
 *   args: Type.Object({ name: Type.String({ minLength: 1, description: 'Name of the person to greet.' }) }, { additionalProperties: false }),
 *   usage: {
 *     purpose: 'Greet the user by name.',
 *     rules: 'Call it once per greeting request; never without a name.',
 *     arguments: { name: "the user's name as they gave it." },
 *     errors: { INVALID_ARGUMENTS: 'name is missing or empty; ask the user for it.' },
 *     good: '"Say hello to Ada" → { "name": "Ada" }',
 *     bad: '{ "name": "" }: the name must not be empty.',
 *   },
 *   run: ({ name }, context) => ({ message: `Hello, ${name}!`, sessionId: context.sessionId ?? null }),
 * });
 */
export function defineTool<
  const TName extends string,
  TArgs extends TObject,
  TDeps extends ToolDependencies = ToolDependencies,
  TOutput extends ObjectSchemaLike | undefined = undefined,
>(definition: ToolDefinition<TName, TArgs, TDeps, TOutput>): DefinedTool<TName, TArgs, TDeps> {
  const { name, description, args, run, createRun } = definition as ToolDefinitionFields<
    string,
    TObject,
    ObjectSchemaLike | undefined
  > & {
    readonly run?: ToolRun<TObject>;
    readonly createRun?: (dependencies: ToolDependencies) => ToolRun<TObject>;
  };
  if ((typeof run === 'function') === (typeof createRun === 'function')) {
    throw new TypeError(
      `defineTool(${JSON.stringify(name)}) needs run(args, context, signal) or createRun(dependencies), ${run === undefined ? 'and has neither' : 'not both'}.`,
    );
  }
  const gated = definition.approval !== undefined && definition.approval !== 'never';
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  const given: Partial<UsageGuideSections> = definition.usage ?? {};
  const sections: Partial<UsageGuideSections> = { ...given, arguments: given.arguments ?? describeArguments(args) };
  const errors = usageItems(sections.errors);
  for (const [code, text, whenGated] of BASE_CODES) {
    if ((gated || !whenGated) && !errors.some((line) => new RegExp(`\\b${code}\\b`).test(line)))
      errors.push(`${code}: ${text}`);
  }
  const guide = usageGuide(name, { ...sections, errors: errors as [string, ...string[]] } as UsageGuideSections);
  const schemaOptions = definition.strict === undefined ? {} : { strict: definition.strict };

  abstract class Defined extends TypedAgentTool<TObject> {
    static readonly ToolName = name;
    static readonly ToolUsageMetadata = guide;
    static getSchema(): FunctionToolSchema {
      return functionToolSchema(name, description, args, schemaOptions);
    }

    constructor(dependencies: ToolDependencies) {
      super(args, dependencies.logger);
      // The dependencies are read here, where a class's constructor reads them: a host that cannot
      // provide one fails to build the tool (TOOL_UNAVAILABLE), not in the middle of a call.
      if (createRun !== undefined) (this as unknown as { run: unknown }).run = createRun(dependencies);
    }
  }
  // On the prototype as it is, so TypedAgentTool and the contract kit see the parameters `run` declares.
  if (run !== undefined)
    Object.defineProperty(Defined.prototype, 'run', {
      value: run,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  Object.defineProperty(Defined, 'name', { value: className(name), configurable: true });
  Object.defineProperty(Defined, definedFrom, { value: run ?? createRun });
  defineStatic(
    Defined,
    'Modes',
    Array.isArray(definition.modes) ? Object.freeze([...definition.modes]) : definition.modes,
  );
  defineStatic(Defined, 'ApprovalPolicy', definition.approval);
  defineStatic(Defined, 'TimeoutMs', definition.timeoutMs);
  defineStatic(Defined, 'OutputSchema', definition.outputSchema);
  defineStatic(Defined, 'ToolAnnotations', definition.annotations);
  defineStatic(Defined, 'TaskSupport', definition.taskSupport);
  defineStatic(Defined, 'TaskInput', definition.taskInput);
  return Defined as unknown as DefinedTool<TName, TArgs, TDeps>;
}
