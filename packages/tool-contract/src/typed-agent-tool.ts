import type { Static, TObject } from 'typebox';
import type { AdminLogger } from './admin-logger.js';
import type { AgentTool, AgentToolExecutionContext } from './agent-tool.js';
import { decodedValue, decodeFor, REFUSED, takeRefusal, type DecodedArguments } from './arguments.js';
import { cancelledJson, isAbortError } from './cancellation.js';
import { ExecutionErrorCode } from './errors.js';
import { InvokeResult } from './invoke-result.js';
import { refusedResult } from './refusal.js';
import { canonicalJson, toPlainJson, type JsonSchema } from './schema.js';

/**
 * The method by which the executor hands a tool arguments it has not yet parsed or that arrived as an
 * object, so the arguments are parsed and validated once per call. A global symbol: tools built
 * against another copy of this package still take the fast path. Versioned, because the protocol is
 * internal: a copy speaking another version of it is called through `execute` instead.
 *
 * `tool[invokeTool](input, context, signals)` answers with JSON text the tool serialised itself (a
 * success needing no further check), an InvokeResult (a failure, or whatever `run` returned), or a
 * promise of either. It answers synchronously when `run` does, so a synchronous tool costs no promise.
 * @internal
 */
export const invokeTool: unique symbol = Symbol.for('@aptix/tool-contract/invoke@2') as never;

/** What `tool[invokeTool]` answers, before the executor wraps it. @internal */
export type Invocation = string | InvokeResult<string>;

/**
 * Where a call's AbortSignal comes from. Creating an AbortSignal costs more than the rest of a small
 * call (about 3 µs on Node 20), so the executor makes one only for a tool that takes it. @internal
 */
export interface SignalSource {
  signal(): AbortSignal;
  /**
   * Set when the input is an object the caller already validated against this schema (the tool's
   * registered parameters), unchanged since: an approval gate that checked the arguments to evaluate a
   * policy. A tool whose own schema is the same need not check it again.
   */
  readonly checkedAgainst?: JsonSchema;
}

const NEVER_ABORTED = new AbortController().signal;
/** Where a tool keeps its parameters schema: a key of this module's own, which no subclass can collide with. */
const parametersKey: unique symbol = Symbol('parameters');
const NO_SIGNAL: SignalSource = Object.freeze({ signal: () => NEVER_ABORTED });

/**
 * Whether a tool's own parameters schema is the registered one a caller validated against: the same
 * keywords once TypeBox's symbols are dropped. Compared once per pair of schema objects.
 */
const sameAs = new WeakMap<object, { readonly against: JsonSchema; readonly same: boolean }>();
/** The last pair compared, ahead of the map: calls of one tool in a row are the common case. */
let last: { readonly own: object; readonly against: JsonSchema; readonly same: boolean } | undefined;
function isSameSchema(own: object, against: JsonSchema): boolean {
  if (last !== undefined && last.own === own && last.against === against) return last.same;
  const known = sameAs.get(own);
  if (known !== undefined && known.against === against) {
    last = { own, against, same: known.same };
    return known.same;
  }
  const same = canonicalJson(toPlainJson(own)) === canonicalJson(against);
  sameAs.set(own, { against, same });
  last = { own, against, same };
  return same;
}

/**
 * Whether a `run` declares the signal parameter. A function's `length` is read through an accessor that
 * costs a tenth of a small call, so the answer for the last `run` asked about is kept: calls of one
 * tool in a row are the common case.
 */
let lastRun: unknown;
let lastTakes = false;
function takesSignal(run: (...args: never[]) => unknown): boolean {
  if (run !== lastRun) {
    lastTakes = run.length >= 3;
    lastRun = run;
  }
  return lastTakes;
}

/** A signal that never aborts, for tools whose `run` or `execute` declares no `signal` parameter. @internal */
export const neverAborted: AbortSignal = NEVER_ABORTED;

/** What `run` may return: a value to serialise as the result JSON, or an InvokeResult of its own (e.g. a failure). */
export type RunOutput = object | InvokeResult<string>;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * The base a tool extends. It implements the contract's `execute(argumentsJson, context, signal)`:
 * parse, validate against the TypeBox schema, call `run`, serialise, and turn any exception into a
 * logged, generic failure. The subclass holds only what is particular to the tool.
 *
 * @example
 * const Args = Type.Object({ name: Type.String({ minLength: 1, description: 'Name of the person to greet.' }) }, { additionalProperties: false });
 * export class HelloWorldTool extends TypedAgentTool<typeof Args> {
 *   static readonly ToolName = 'agent_hello_world';
 *   static readonly ToolUsageMetadata = usage`...`;
 *   static getSchema() { return functionToolSchema(HelloWorldTool.ToolName, 'Creates a friendly greeting.', Args); }
 *   constructor({ logger }: ToolDependencies) { super(Args, logger); }
 *   protected run({ name }: Static<typeof Args>, context: AgentToolExecutionContext) {
 *     return { message: `Hello, ${name}!`, conversationId: context.conversationId, sessionId: context.sessionId };
 *   }
 * }
 */
export abstract class TypedAgentTool<TArgs extends TObject> implements AgentTool {
  // Assigned in the constructor rather than declared as class fields: a tool is built per call, and
  // defining fields on instances of many subclasses (a megamorphic define per field, twice for a field
  // declared without a value) was a tenth of a small call. A subclass may still override them as fields.
  declare readonly isToolFullyExecutedOnServer: boolean;
  declare protected readonly logger: AdminLogger;
  /** The parameters as given: the compiled validator is cached per schema object, so every instance shares it. */
  declare private readonly [parametersKey]: TArgs;

  constructor(parameters: TArgs, logger: AdminLogger) {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (logger === null || logger === undefined) throw new TypeError(`${new.target.name} requires a logger.`);
    const self = this as unknown as {
      isToolFullyExecutedOnServer: boolean;
      logger: AdminLogger;
      [parametersKey]: TArgs;
    };
    self.isToolFullyExecutedOnServer = true;
    self[parametersKey] = parameters;
    self.logger = logger;
  }

  /** The class's `ToolName`. */
  get name(): string {
    return (this.constructor as unknown as { ToolName: string }).ToolName;
  }

  async execute(
    argumentsJson: string,
    context: AgentToolExecutionContext,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>> {
    const output = await this[invokeTool](
      argumentsJson,
      context,
      signal === undefined ? NO_SIGNAL : { signal: () => signal },
    );
    return typeof output === 'string' ? InvokeResult.create(output) : output;
  }

  /** @internal The executor's entry: `input` is the raw JSON text or an already parsed object. */
  [invokeTool](
    input: unknown,
    context: AgentToolExecutionContext,
    signals: SignalSource,
  ): Invocation | Promise<Invocation> {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    const ctx = context ?? {};
    try {
      // Checked already (see SignalSource.checkedAgainst) against this very schema, by this very decode: not again.
      const checked = signals.checkedAgainst;
      const own = this.decode === ownDecode;
      let args: unknown;
      if (own && checked !== undefined && isSameSchema(this[parametersKey], checked)) args = input;
      else if (own) {
        // This class's own decode, without the { ok, value } it would make and drop.
        args = decodedValue(this, this[parametersKey] as unknown as JsonSchema, input);
        if (args === REFUSED)
          return InvokeResult.fromError(takeRefusal().message, ExecutionErrorCode.INVALID_ARGUMENTS);
      } else {
        const decoded = this.decode(input, ctx);
        if (!decoded.ok) return InvokeResult.fromError(decoded.message, ExecutionErrorCode.INVALID_ARGUMENTS);
        args = decoded.value;
      }
      // A run that declares no signal parameter cannot read one: it gets a shared signal that never aborts.
      const signal = takesSignal(this.run) ? signals.signal() : NEVER_ABORTED;
      const output = this.run(args as Static<TArgs>, ctx, signal);
      if (isThenable(output)) {
        return Promise.resolve(output).then(
          (value) => this.#serialise(value as RunOutput, ctx),
          // A run that stopped on its aborted signal had no effect: the cancelled shape (AGN-005 §8).
          (error: unknown) =>
            signal.aborted && isAbortError(error, signal) ? cancelledJson(this.name, ctx) : this.#failure(error, ctx),
        );
      }
      return this.#serialise(output, ctx);
    } catch (error) {
      return this.#failure(error, ctx);
    }
  }

  #serialise(output: RunOutput, ctx: AgentToolExecutionContext): Invocation {
    if (InvokeResult.isInvokeResult(output)) return output as InvokeResult<string>;
    try {
      const json = JSON.stringify(output);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, a function or a symbol, whatever its declared type says
      if (json === undefined) throw new TypeError(`${this.name}.run() returned nothing to serialise.`);
      return json;
    } catch (error) {
      return this.#failure(error, ctx);
    }
  }

  #failure(error: unknown, ctx: AgentToolExecutionContext): InvokeResult<string> {
    const refused = refusedResult(this.name, error);
    if (refused !== undefined) return refused;
    this.logger.addException(`[${this.name}_ExecuteAsync__Exception]`, error, [
      ['SessionId', ctx.sessionId ?? ''],
      ['ConversationId', ctx.conversationId ?? ''],
    ]);
    return InvokeResult.fromError(this.failureMessage(), ExecutionErrorCode.TOOL_EXCEPTION);
  }

  /**
   * Parses and validates the raw arguments. Override to add checks that must come first, with your
   * own messages (TUL-007 fixes such an order), then call `super.decode`.
   */
  protected decode(input: unknown, _context: AgentToolExecutionContext): DecodedArguments<Static<TArgs>> {
    return decodeFor<Static<TArgs>>(this, this[parametersKey] as unknown as JsonSchema, input);
  }

  /** The generic message of an unexpected exception (AGN-005 §4.3). Never includes the exception itself. */
  protected failureMessage(): string {
    return `${this.name} failed to process arguments.`;
  }

  /**
   * The tool's own work, on arguments already validated against its schema. Declare the `signal`
   * parameter (as a plain parameter, without a default) to be told of cancellations and time-outs; a
   * `run` that declares only `args` and `context` is handed a shared signal that never aborts, which
   * spares the call the cost of making one.
   *
   * After the signal aborts, settle soon (within the executor's grace period): reject with the
   * AbortError (or return the cancelled shape) only if the effect did not and will not happen; if the
   * change was already made, return its normal result. See docs/tool-packages.md, "Cancellation".
   */
  protected abstract run(
    args: Static<TArgs>,
    context: AgentToolExecutionContext,
    signal: AbortSignal,
  ): Promise<RunOutput> | RunOutput;
}

/**
 * TypedAgentTool's own fast-path method, kept when this module loads: the executor takes raw JSON text
 * unchecked only from this very function (a subclass cannot change what it does, since it serialises
 * through a private method). @internal
 */
export const ownInvokeTool = TypedAgentTool.prototype[invokeTool];
const ownDecode = (TypedAgentTool.prototype as unknown as { decode: unknown }).decode;
