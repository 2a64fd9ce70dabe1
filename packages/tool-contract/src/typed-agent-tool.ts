import type { Static, TObject } from 'typebox';
import type { AdminLogger } from './admin-logger.js';
import type { AgentTool, AgentToolExecutionContext } from './agent-tool.js';
import { decodeArguments, type DecodedArguments } from './arguments.js';
import { ExecutionErrorCode } from './errors.js';
import { InvokeResult } from './invoke-result.js';
import type { JsonSchema } from './schema.js';

/**
 * The method by which the executor hands a tool arguments it has not yet parsed or that arrived as an
 * object, so the arguments are parsed and validated once per call. A global symbol: tools built
 * against another copy of this package still take the fast path.
 */
export const invokeTool: unique symbol = Symbol.for('@aptix/tool-contract/invoke') as never;

/** Results whose JSON this package produced itself, so the executor need not parse them again. */
export const serialisedResults = new WeakSet<object>();

const NEVER_ABORTED = new AbortController().signal;

/** What `run` may return: a value to serialise as the result JSON, or an InvokeResult of its own (e.g. a failure). */
export type RunOutput = object | InvokeResult<string>;

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
  readonly isToolFullyExecutedOnServer: boolean = true;
  protected readonly logger: AdminLogger;
  readonly #parameters: TArgs;

  constructor(parameters: TArgs, logger: AdminLogger) {
    if (logger === null || logger === undefined) throw new TypeError(`${new.target.name} requires a logger.`);
    // Kept as given: the compiled validator is cached per schema object, so every instance shares it.
    this.#parameters = parameters;
    this.logger = logger;
  }

  /** The class's `ToolName`. */
  get name(): string {
    return (this.constructor as unknown as { ToolName: string }).ToolName;
  }

  execute(argumentsJson: string, context: AgentToolExecutionContext, signal?: AbortSignal): Promise<InvokeResult<string>> {
    return this[invokeTool](argumentsJson, context, signal);
  }

  /** @internal The executor's entry: `input` is the raw JSON text or an already parsed object. */
  async [invokeTool](input: unknown, context: AgentToolExecutionContext, signal?: AbortSignal): Promise<InvokeResult<string>> {
    const ctx = context ?? {};
    try {
      const decoded = this.decode(input, ctx);
      if (!decoded.ok) return InvokeResult.fromError(decoded.message, ExecutionErrorCode.INVALID_ARGUMENTS);
      const output = await this.run(decoded.value, ctx, signal ?? NEVER_ABORTED);
      if (InvokeResult.isInvokeResult(output)) return output as InvokeResult<string>;
      const json = JSON.stringify(output);
      if (json === undefined) throw new TypeError(`${this.name}.run() returned nothing to serialise.`);
      const result = InvokeResult.create(json);
      serialisedResults.add(result);
      return result;
    } catch (error) {
      this.logger.addException(`[${this.name}_ExecuteAsync__Exception]`, error, [
        ['SessionId', ctx.sessionId ?? ''],
        ['ConversationId', ctx.conversationId ?? ''],
      ]);
      return InvokeResult.fromError(this.failureMessage(), ExecutionErrorCode.TOOL_EXCEPTION);
    }
  }

  /**
   * Parses and validates the raw arguments. Override to add checks that must come first, with your
   * own messages (TUL-007 fixes such an order), then call `super.decode`.
   */
  protected decode(input: unknown, _context: AgentToolExecutionContext): DecodedArguments<Static<TArgs>> {
    return decodeArguments<Static<TArgs>>(this.name, this.#parameters as unknown as JsonSchema, input);
  }

  /** The generic message of an unexpected exception (AGN-005 §4.3). Never includes the exception itself. */
  protected failureMessage(): string {
    return `${this.name} failed to process arguments.`;
  }

  /** The tool's own work, on arguments already validated against its schema. */
  protected abstract run(args: Static<TArgs>, context: AgentToolExecutionContext, signal: AbortSignal): Promise<RunOutput> | RunOutput;
}
