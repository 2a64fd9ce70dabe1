/**
 * An isolated tool's approval policy that depends on the arguments is a function in its worker. The
 * host's proxy carries a synchronous stand-in that fails closed (a person decides every call), and,
 * under {@link evaluateInWorker}, the way to ask the worker: the host's approval gate, which is
 * asynchronous, uses that when it is there.
 */
import type { AgentToolExecutionContext, ApprovalPolicy } from '@aptix/tool-contract';

/** The worker's answer for one call: whether a person must approve it, and why. */
export interface PolicyAnswer {
  readonly required: boolean;
  readonly reason: string;
}

export const evaluateInWorker: unique symbol = Symbol('aptix.isolation.evaluateInWorker');

type WorkerPolicy = ApprovalPolicy & {
  readonly [evaluateInWorker]?: (args: unknown, context: AgentToolExecutionContext) => Promise<PolicyAnswer>;
};

/** The policy the host registers for an isolated tool whose own policy depends on the arguments. */
export function isolatedDynamicPolicy(
  name: string,
  ask: (args: unknown, context: AgentToolExecutionContext) => Promise<PolicyAnswer>,
): ApprovalPolicy {
  const failClosed = () => ({
    required: true,
    reason: `${name}'s approval policy depends on its arguments and runs in its package's isolated worker, which this caller cannot consult; so a person decides.`,
  });
  return Object.assign(failClosed, { [evaluateInWorker]: ask });
}

/** The worker-side evaluation of a policy, when it has one (see {@link isolatedDynamicPolicy}). */
export function workerEvaluation(
  policy: unknown,
): ((args: unknown, context: AgentToolExecutionContext) => Promise<PolicyAnswer>) | undefined {
  return typeof policy === 'function' ? (policy as WorkerPolicy)[evaluateInWorker] : undefined;
}

/** How long the host waits for a worker to evaluate a policy before a person decides instead. */
export const POLICY_ANSWER_MS = 2000;

interface Asked {
  readonly entry: object;
  readonly name: string;
  readonly resolve: (answer: PolicyAnswer) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * The host's side of policy evaluation in workers: each question waits for its worker's answer, at most
 * {@link POLICY_ANSWER_MS}; a worker that does not answer, ends, or answers something unreadable gets
 * the call gated (fails closed). An answer is taken only from the worker that was asked.
 */
export class PolicyQuestions {
  readonly #asked = new Map<number, Asked>();

  ask(entry: object, id: number, name: string, post: () => void, onLate: () => void): Promise<PolicyAnswer> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#asked.delete(id);
        onLate();
        resolve({
          required: true,
          reason: `${name}'s approval policy did not answer within ${POLICY_ANSWER_MS} ms in its isolated worker, so a person must decide.`,
        });
      }, POLICY_ANSWER_MS);
      timer.unref();
      this.#asked.set(id, { entry, name, resolve, timer });
      post();
    });
  }

  /** A worker's answer: `required` must be exactly false for the call to run without asking. */
  answer(entry: object, message: { id?: unknown; required?: unknown; reason?: unknown }): void {
    const asked = typeof message.id === 'number' ? this.#asked.get(message.id) : undefined;
    if (asked === undefined || asked.entry !== entry) return;
    this.#asked.delete(message.id as number);
    clearTimeout(asked.timer);
    if (message.required === false) return asked.resolve({ required: false, reason: '' });
    const reason =
      typeof message.reason === 'string' && message.reason.trim() !== ''
        ? message.reason.slice(0, 2000)
        : `${asked.name} needs a person's approval for these arguments.`;
    asked.resolve({ required: true, reason });
  }

  /** The worker ended: its open questions are answered "a person decides". */
  ended(entry: object): void {
    for (const [id, asked] of this.#asked) {
      if (asked.entry !== entry) continue;
      this.#asked.delete(id);
      clearTimeout(asked.timer);
      asked.resolve({
        required: true,
        reason: `${asked.name}'s approval policy could not be evaluated (its worker stopped), so a person must decide.`,
      });
    }
  }
}
