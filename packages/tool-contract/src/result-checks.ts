import type { AdminLogger } from './admin-logger.js';
import type { AgentToolExecutionContext } from './agent-tool.js';
import { reportsCancellation } from './cancellation.js';
import { cleanErrors } from './clean-errors.js';
import { checkContent } from './content.js';
import { describeThrown } from './describe-thrown.js';
import { ExecutionErrorCode } from './errors.js';
import { inputNeededProblem, unanswerableKinds, type ToolInputKind, type ToolInputNeeded } from './input-required.js';
import { InvokeResult, type InvokeSuccess } from './invoke-result.js';
import { outputMismatch } from './output-schema.js';
import { refusedResult } from './refusal.js';
import type { JsonSchema } from './schema.js';

/**
 * What the executor checks of a tool's answer before anyone gets it: its shape, that its text is JSON,
 * its size, its content blocks, its output schema, and the length of its error messages. Never throws.
 */
export class ResultChecks {
  readonly #maxResultBytes: number;
  readonly #maxErrorMessageLength: number;

  constructor(maxResultBytes: number, maxErrorMessageLength: number) {
    this.#maxResultBytes = maxResultBytes;
    this.#maxErrorMessageLength = maxErrorMessageLength;
  }

  /** A tool's answer as the result the caller gets. */
  settle(
    name: string,
    output: unknown,
    context: AgentToolExecutionContext,
    trusted: boolean,
    logger: AdminLogger,
    outputSchema: JsonSchema | undefined,
  ): InvokeResult<string> {
    // JSON text from TypedAgentTool's own fast path: the tool serialised the value itself.
    if (trusted && typeof output === 'string' && outputSchema === undefined)
      return this.#bounded(name, output, context, logger);
    try {
      const result =
        trusted && typeof output === 'string'
          ? this.#bounded(name, output, context, logger)
          : this.#normalise(name, output, context, logger);
      return outputSchema === undefined || !result.successful
        ? result
        : this.#conforming(name, result, outputSchema, context, logger);
    } catch (error) {
      // A result whose getters throw (a Proxy, an accessor): malformed, and the call still answers.
      logger.addError(
        `[${name}_ExecuteAsync__MalformedResult]`,
        `${name} returned a result that could not be read: ${describeThrown(error)}.`,
        pairs(context),
      );
      return InvokeResult.fromError(`${name} returned a malformed result.`, ExecutionErrorCode.MALFORMED_RESULT);
    }
  }

  /**
   * A successful result that matches the tool's output schema, or OUTPUT_SCHEMA_MISMATCH: a result its
   * own schema refuses is a fault of the tool, and MCP clients would refuse its structuredContent.
   */
  #conforming(
    name: string,
    result: InvokeSuccess<string>,
    schema: JsonSchema,
    context: AgentToolExecutionContext,
    logger: AdminLogger,
  ): InvokeResult<string> {
    // A cancellation report is the executor's shape, not the tool's result: it is not checked.
    if (reportsCancellation(result.result)) return result;
    const problem = outputMismatch(schema, JSON.parse(result.result));
    if (problem === undefined) return result;
    logger.addError(
      `[${name}_ExecuteAsync__OutputSchemaMismatch]`,
      `${name} returned a result that does not match its OutputSchema: ${problem}.`,
      pairs(context),
    );
    return InvokeResult.fromError(
      `${name} returned a result that does not match its declared output schema ` +
        `(${problem.slice(0, 500)}), so it was not sent. This is a fault in the tool, not in the ` +
        `arguments; the tool's author needs to fix the result or the schema.`,
      ExecutionErrorCode.OUTPUT_SCHEMA_MISMATCH,
    );
  }

  /** A successful result, unless its text (plus its content's `extraBytes`) is over the size bound. */
  #bounded(
    name: string,
    text: string,
    context: AgentToolExecutionContext,
    logger: AdminLogger,
    extraBytes = 0,
  ): InvokeResult<string> {
    const max = this.#maxResultBytes - extraBytes;
    // A UTF-16 unit is 1 to 3 UTF-8 bytes: only text in between needs counting.
    if (text.length * 3 <= max || (text.length <= max && Buffer.byteLength(text, 'utf8') <= max))
      return InvokeResult.create(text);
    const limit = this.#maxResultBytes;
    logger.addError(
      `[${name}_ExecuteAsync__ResultTooLarge]`,
      `${name} returned a result over ${limit} bytes; it was not sent.`,
      pairs(context),
    );
    return InvokeResult.fromError(
      `${name} returned a result larger than this host's limit of ${limit} ` +
        `bytes${extraBytes > 0 ? ' (its text and content blocks together)' : ''}, so it was not ` +
        `sent. Ask for less (narrow the request, or page through the data); if results this large ` +
        `are expected, the host's operator can raise maxResultBytes.`,
      ExecutionErrorCode.RESULT_TOO_LARGE,
    );
  }

  exception(
    name: string,
    error: unknown,
    context: AgentToolExecutionContext,
    logger: AdminLogger,
  ): InvokeResult<string> {
    const refused = refusedResult(name, error);
    if (refused !== undefined) return refused;
    try {
      logger.addException(`[${name}_ExecuteAsync__Exception]`, error, pairs(context));
    } catch {
      // A logger that throws must not turn a failed call into one that never answers.
    }
    return InvokeResult.fromError(`${name} failed to process arguments.`, ExecutionErrorCode.TOOL_EXCEPTION);
  }

  /** A successful result with content blocks: every block checked, and the whole within the size bound. */
  #withContent(
    name: string,
    text: string,
    content: unknown,
    context: AgentToolExecutionContext,
    logger: AdminLogger,
  ): InvokeResult<string> {
    const checked = checkContent(content, this.#maxResultBytes);
    if (!checked.ok && checked.tooLarge) return this.#bounded(name, text, context, logger, this.#maxResultBytes + 1);
    if (!checked.ok) {
      logger.addError(
        `[${name}_ExecuteAsync__MalformedResult]`,
        `${name} returned malformed content: ${checked.problem}.`,
        pairs(context),
      );
      return InvokeResult.fromError(
        `${name} returned a malformed result: ${checked.problem}. Nothing of it was sent; the tool's author needs to fix it.`,
        ExecutionErrorCode.MALFORMED_RESULT,
      );
    }
    // Over the bound whatever the text: refused before the text is measured.
    const result = this.#bounded(name, text, context, logger, Math.min(checked.bytes, this.#maxResultBytes + 1));
    return result.successful
      ? { successful: true, result: text, errors: result.errors, content: checked.blocks }
      : result;
  }

  /** Accepts any object shaped like an InvokeResult; a successful one must carry valid JSON text (AGN-005 §9). */
  #normalise(
    name: string,
    output: unknown,
    context: AgentToolExecutionContext,
    logger: AdminLogger,
  ): InvokeResult<string> {
    if (!InvokeResult.isInvokeResult(output)) {
      logger.addError(
        `[${name}_ExecuteAsync__MalformedResult]`,
        `${name} returned something that is not an InvokeResult.`,
        pairs(context),
      );
      return InvokeResult.fromError(`${name} returned a malformed result.`, ExecutionErrorCode.MALFORMED_RESULT);
    }
    if (output.successful) {
      const text = output.result;
      if (typeof text === 'string') {
        let json = true;
        try {
          JSON.parse(text);
        } catch {
          json = false;
        }
        if (json)
          return output.content === undefined
            ? this.#bounded(name, text, context, logger)
            : this.#withContent(name, text, output.content, context, logger);
      }
      logger.addError(
        `[${name}_ExecuteAsync__MalformedResult]`,
        `${name} returned a successful result that is not JSON text.`,
        pairs(context),
      );
      return InvokeResult.fromError(
        `${name} returned a result that is not valid JSON.`,
        ExecutionErrorCode.MALFORMED_RESULT,
      );
    }
    const errors = cleanErrors(output.errors, this.#maxErrorMessageLength);
    const failed: InvokeResult<string> =
      errors.length > 0
        ? { successful: false, result: null, errors }
        : InvokeResult.fromError(`${name} failed without saying why.`);
    const { inputRequired } = output as { inputRequired?: unknown };
    if (inputRequired === undefined) return failed;
    // Questions for the user: passed on only when well formed, and only to a caller that can relay them.
    const problem = inputNeededProblem(inputRequired);
    if (problem !== undefined) {
      logger.addError(
        `[${name}_ExecuteAsync__MalformedResult]`,
        `${name} asked for input malformed: ${problem}.`,
        pairs(context),
      );
      return InvokeResult.fromError(
        `${name} returned a malformed result: ${problem}.`,
        ExecutionErrorCode.MALFORMED_RESULT,
      );
    }
    const needed = inputRequired as ToolInputNeeded;
    const unanswerable = unanswerableKinds(needed, context.input);
    if (unanswerable.length === 0) return { ...failed, inputRequired: needed };
    // A caller that cannot answer every request gets none of them: one error per kind it lacks, each saying what to do.
    return {
      successful: false,
      result: null,
      errors: unanswerable.flatMap((kind) =>
        kind === 'elicitation' ? failed.errors : [{ message: unavailable(name, kind), code: UNAVAILABLE_CODE[kind] }],
      ),
    };
  }
}

const UNAVAILABLE_CODE = {
  sampling: ExecutionErrorCode.SAMPLING_UNAVAILABLE,
  roots: ExecutionErrorCode.ROOTS_UNAVAILABLE,
} as const;

/** Why a call that needs the client's model or roots could not go on, and how to make it work. */
function unavailable(name: string, kind: Exclude<ToolInputKind, 'elicitation'>): string {
  return kind === 'sampling'
    ? `${name} needs a completion from the client's model (MCP sampling), and this caller cannot give one, so nothing was done. Call it from an MCP client that declares the sampling capability.`
    : `${name} needs the client's roots (MCP roots/list), and this caller cannot list them, so nothing was done. Call it from an MCP client that declares the roots capability.`;
}

/** The session and conversation ids of a call, as the pairs of its log lines. */
export function pairs(context: AgentToolExecutionContext): Array<[string, string]> {
  return [
    ['SessionId', context.sessionId ?? ''],
    ['ConversationId', context.conversationId ?? ''],
  ];
}
