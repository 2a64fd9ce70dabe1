import type { AgentTool } from '../agent-tool.js';
import { ExecutionErrorCode } from '../errors.js';
import type { JsonSchema } from '../schema.js';
import type { AgentToolExecutor } from '../tool-executor.js';
import { invokeTool } from '../typed-agent-tool.js';
import { ContractCheckCode, type ContractFinding } from './codes.js';
import { sampleArguments } from './sample-arguments.js';
import { testContext } from './test-context.js';

/** What the cancellation check did: skipped (and why), or the code of the answer to the cancelled call. */
export type CancellationRun =
  | { readonly ran: false; readonly reason: 'no-signal' | 'no-arguments' }
  | { readonly ran: true; readonly arguments: string; readonly successful: boolean; readonly code?: string };

/**
 * True when the tool reads its AbortSignal: a TypedAgentTool whose `run` declares the `signal`
 * parameter, or an `execute` that declares its third parameter.
 */
export function takesSignal(instance: AgentTool): boolean {
  const run = (instance as unknown as { run?: unknown }).run;
  if (typeof (instance as unknown as Record<symbol, unknown>)[invokeTool] === 'function' && typeof run === 'function')
    return run.length >= 3;
  return typeof instance.execute === 'function' && instance.execute.length >= 3;
}

/**
 * A tool that takes the signal must settle soon after an abort, so a host can say what it did
 * (docs/tool-packages.md, "Cancellation"). Runs one call with arguments the schema accepts, cancels it
 * once the tool has started, and finds a violation when the executor had to answer OUTCOME_UNKNOWN.
 */
export async function checkCancellation(
  name: string,
  instance: AgentTool,
  executor: AgentToolExecutor,
  parameters: JsonSchema,
  given: Readonly<Record<string, unknown>> | undefined,
  violations: ContractFinding[],
): Promise<CancellationRun> {
  if (!takesSignal(instance)) return { ran: false, reason: 'no-signal' };
  const args = given ?? sampleArguments(name, parameters);
  if (args === undefined) return { ran: false, reason: 'no-arguments' };
  const json = JSON.stringify(args);
  const controller = new AbortController();
  const pending = executor.execute(name, json, testContext(), { signal: controller.signal, timeoutMs: 2_147_483_647 });
  // Once the tool's synchronous start is over (it is waiting on something), cancel.
  setImmediate(() => controller.abort());
  const result = await pending;
  const code = result.successful ? undefined : result.errors[0]?.code;
  if (code === ExecutionErrorCode.OUTCOME_UNKNOWN) {
    violations.push({
      code: ContractCheckCode.CANCELLATION_NOT_SETTLED,
      message:
        `Tool "${name}" takes the AbortSignal, but did not settle within ${executor.cancelGraceMs} ms after its call (arguments ${json}) was cancelled: ` +
        'a host cannot tell whether its effect happened, and answers OUTCOME_UNKNOWN. Fix: pass the signal to everything the tool waits on, and return ' +
        '(or reject with the AbortError) soon after it aborts; see "Cancellation, time-outs and honest outcomes" in docs/tool-packages.md.',
    });
  }
  return { ran: true, arguments: json, successful: result.successful, ...(code === undefined ? {} : { code }) };
}
