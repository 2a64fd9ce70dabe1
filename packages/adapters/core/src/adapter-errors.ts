import { ExecutionErrorCode, InvokeResult } from '@aptix/tool-contract';

/** The codes adapters put on failures of their own, beside the executor's (`INVALID_ARGUMENTS`, `TIMEOUT`, …). */
export const AdapterErrorCode = {
  /** The session's mode does not offer the tool (the host's code for the same refusal). */
  TOOL_NOT_IN_MODE: 'TOOL_NOT_IN_MODE',
  /** The session the adapter works in no longer exists. */
  SESSION_NOT_FOUND: 'SESSION_NOT_FOUND',
  /** The tool's ApprovalPolicy asks a person to approve this call, and the framework has no approval step wired to it: nothing ran. */
  APPROVAL_REQUIRED: 'APPROVAL_REQUIRED',
  /** `aptix_find_tools` or `aptix_call_tool` named another session than the adapter's: nothing ran. */
  SESSION_MISMATCH: 'SESSION_MISMATCH',
} as const;

/** The text a model reads for a failed call: `{"error":{"message","code"}}`, as the Reasoner sends it (AGN-005 §9). */
export function failureText(result: InvokeResult<string>): string {
  const message = InvokeResult.errorMessage(result) || 'The tool failed without saying why.';
  const code = result.errors.find((error) => error.code !== undefined)?.code ?? 'TOOL_FAILED';
  return JSON.stringify({ error: { message, code } });
}

/**
 * A failed call, thrown where a framework's idiom for a tool error is an exception. Its message is the
 * model-facing {@link failureText}, so the model reads the message and the code whatever the framework
 * does with it; `code` and `result` are there for the application.
 */
export class AptixToolError extends Error {
  override readonly name = 'AptixToolError';
  /** The first code of the failed result (`INVALID_ARGUMENTS`, `TIMEOUT`, a tool's own…), or `TOOL_FAILED`. */
  readonly code: string;
  readonly toolName: string;
  readonly result: InvokeResult<string>;

  constructor(toolName: string, result: InvokeResult<string>) {
    super(failureText(result));
    this.toolName = toolName;
    this.result = result;
    this.code = result.errors.find((error) => error.code !== undefined)?.code ?? 'TOOL_FAILED';
  }

  /** The model-facing text alone: frameworks that show a model `String(error)` (the AI SDK) then send just the JSON. */
  override toString(): string {
    return this.message;
  }
}

function isTimeout(reason: unknown): reason is { message: string } {
  return reason instanceof Error && reason.name === 'TimeoutError';
}

/** A call the framework's time-out stopped, as the failure it is (the executor reports any abort as a cancellation). */
export function timedOut(
  name: string,
  result: InvokeResult<string>,
  signal: AbortSignal,
): InvokeResult<string> | undefined {
  if (!signal.aborted || !isTimeout(signal.reason) || !wasCancelled(result)) return undefined;
  return InvokeResult.fromError(
    `${name} did not finish in time and was stopped (${signal.reason.message}). Try a smaller request, or allow more time.`,
    ExecutionErrorCode.TIMEOUT,
  );
}

function wasCancelled(result: InvokeResult<string>): boolean {
  if (!result.successful) return false;
  try {
    return (JSON.parse(result.result) as { wasCancelled?: unknown }).wasCancelled === true;
  } catch {
    return false;
  }
}

/**
 * A render or read that failed, thrown where a framework's idiom is an exception (a LangChain prompt
 * template or document loader). The message names what is wrong and how to fix it, as the failed
 * result does; `code` is its stable code (`PROMPT_NOT_FOUND`, `INVALID_ARGUMENTS`, `TIMEOUT`, …).
 */
export class AptixUnitError extends Error {
  override readonly name = 'AptixUnitError';
  readonly code: string;

  constructor(failure: { readonly code: string; readonly message: string }) {
    super(failure.message);
    this.code = failure.code;
  }
}
