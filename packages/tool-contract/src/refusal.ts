import { ExecutionErrorCode } from './errors.js';
import { InvokeResult } from './invoke-result.js';

/** Marks a {@link ToolRefusal} across copies of this package (a host and a worker may load different ones). */
const REFUSAL = Symbol.for('aptix.toolRefusal');

/**
 * What a host throws into a tool's own code to refuse what the tool asked for, such as ending the host
 * process (`process.exit`). The call then fails with the refusal's code and message instead of the
 * generic TOOL_EXCEPTION, whether the executor or a TypedAgentTool catches it.
 *
 * @example
 * throw new ToolRefusal(ExecutionErrorCode.PROCESS_EXIT_REFUSED, 'it called process.exit(3), which would end the host; the host refused it.');
 */
export class ToolRefusal extends Error {
  override readonly name = 'ToolRefusal';
  readonly [REFUSAL] = true;

  constructor(
    readonly code: ExecutionErrorCode,
    /** Completes "<tool> failed: …"; the host's own words, never a stack or a secret. */
    message: string,
  ) {
    super(message);
  }
}

/** The failed result of a call whose tool ran into a refusal; undefined when `error` is not one (or cannot be read). */
export function refusedResult(name: string, error: unknown): InvokeResult<string> | undefined {
  try {
    if (error === null || typeof error !== 'object' || (error as { [REFUSAL]?: unknown })[REFUSAL] !== true)
      return undefined;
    const { code, message } = error as ToolRefusal;
    if (typeof code !== 'string' || !Object.hasOwn(ExecutionErrorCode, code) || typeof message !== 'string')
      return undefined;
    return InvokeResult.fromError(`${name} failed: ${message.slice(0, 2000)}`, code);
  } catch {
    // A Proxy whose traps throw is no refusal.
    return undefined;
  }
}
