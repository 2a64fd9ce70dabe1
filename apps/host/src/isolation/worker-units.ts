/**
 * The worker's side of an isolated package's prompts and resources: checks them against the contract
 * (as the host will again), reports their static side, and runs the host's requests: a prompt's
 * `render`, a resource's `read`, a `complete` function, a `subscribe` hook. What a function returns goes
 * back as it is (structured-cloned); the host's `renderPrompt`/`readResource` check it, as they check an
 * in-process package's, and bound it in time. A throw goes back as its message, never a stack trace.
 */
import {
  describeThrown,
  PromptRegistry,
  ResourceRegistry,
  ToolContractError,
  type AdminLogger,
  type CompleteFunction,
  type UnitContext,
} from '@aptix/tool-contract';
import type {
  IsolatedPromptMeta,
  IsolatedResourceMeta,
  UnitContextData,
  UnitHostMessage,
  UnitWorkerMessage,
} from './unit-protocol.js';

/** Plain JSON of a value the registry read (modes, annotations): what crosses to the host. */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export class WorkerUnits {
  readonly #prompts: PromptRegistry;
  readonly #resources: ResourceRegistry;
  readonly #running = new Map<number, AbortController>();
  readonly #watches = new Map<number, (() => void) | undefined>();

  /**
   * Registers the package's prompts and resources.
   * @throws {Error} naming the package, the unit and the broken rule, as the host's start-up does in process.
   */
  constructor(
    packageName: string,
    prompts: readonly unknown[],
    resources: readonly unknown[],
    private readonly send: (message: UnitWorkerMessage) => void,
    private readonly logger: AdminLogger,
  ) {
    this.#prompts = new PromptRegistry({ logger });
    this.#resources = new ResourceRegistry({ logger });
    for (const [kind, list] of [
      ['prompt', prompts],
      ['resource', resources],
    ] as const) {
      for (const candidate of list) {
        try {
          if (kind === 'prompt') this.#prompts.register(candidate);
          else this.#resources.register(candidate);
        } catch (error) {
          throw new Error(
            error instanceof ToolContractError
              ? `Tool package "${packageName}" has a ${kind} that breaks the contract (${error.code}): ${error.message}`
              : `Tool package "${packageName}" has a ${kind} the host cannot read: ${describeThrown(error)}`,
          );
        }
      }
    }
  }

  /** The prompts' static side, for the host's proxies. */
  prompts(): IsolatedPromptMeta[] {
    return this.#prompts.list().map((prompt) => ({
      name: prompt.name,
      ...(prompt.title === undefined ? {} : { title: prompt.title }),
      description: prompt.description,
      args: plain(prompt.argsSchema),
      ...(prompt.modes === undefined ? {} : { modes: [...prompt.modes] }),
      completes: Object.keys(prompt.complete),
    }));
  }

  /** The resources' static side, for the host's proxies. */
  resources(): IsolatedResourceMeta[] {
    return this.#resources.list().map((resource) => ({
      name: resource.name,
      ...(resource.title === undefined ? {} : { title: resource.title }),
      ...(resource.description === undefined ? {} : { description: resource.description }),
      mimeType: resource.mimeType,
      ...(resource.uri === undefined ? { uriTemplate: resource.template!.template } : { uri: resource.uri }),
      ...(resource.modes === undefined ? {} : { modes: [...resource.modes] }),
      ...(resource.annotations === undefined ? {} : { annotations: plain(resource.annotations) }),
      completes: Object.keys(resource.complete),
      subscribable: resource.subscribable,
    }));
  }

  /** A host message about a unit. */
  handle(message: UnitHostMessage): void {
    switch (message.type) {
      case 'unit-cancel':
        this.#running.get(message.id)?.abort(new DOMException('The request was cancelled.', 'AbortError'));
        return;
      case 'unit-watch':
        this.#watch(message.id, message.name, message.uri);
        return;
      case 'unit-unwatch': {
        const stop = this.#watches.get(message.id);
        this.#watches.delete(message.id);
        try {
          stop?.();
        } catch {
          // A hook that fails to stop cannot be helped; the host stops listening anyway.
        }
        return;
      }
      case 'unit':
        void this.#run(message);
    }
  }

  async #run(message: Extract<UnitHostMessage, { type: 'unit' }>): Promise<void> {
    const { id } = message;
    const controller = new AbortController();
    this.#running.set(id, controller);
    let answer: UnitWorkerMessage;
    try {
      const value = await this.#work(message, this.#context(message.context, controller.signal));
      answer = { type: 'unit', id, ok: true, value };
    } catch (error) {
      answer = { type: 'unit', id, ok: false, message: describeThrown(error) };
    } finally {
      this.#running.delete(id);
    }
    try {
      this.send(answer);
    } catch (error) {
      // A value that cannot be structured-cloned (a function, a class with private state): say so.
      this.send({
        type: 'unit',
        id,
        ok: false,
        message: `it returned a value that cannot be sent from its isolated worker (${describeThrown(error)}); return plain data`,
      });
    }
  }

  #work(message: Extract<UnitHostMessage, { type: 'unit' }>, context: UnitContext): unknown {
    switch (message.op) {
      case 'render': {
        const prompt = this.#prompts.get(message.name);
        if (prompt === undefined) throw new Error(`no prompt named "${message.name}" in the worker`);
        return prompt.prompt.render(message.args as never, context);
      }
      case 'read': {
        const resource = this.#resources.get(message.name);
        if (resource === undefined) throw new Error(`no resource named "${message.name}" in the worker`);
        return resource.resource.read({ uri: message.uri, variables: message.variables }, context);
      }
      case 'complete': {
        const unit = message.kind === 'prompt' ? this.#prompts.get(message.name) : this.#resources.get(message.name);
        const complete: CompleteFunction | undefined =
          unit !== undefined && Object.hasOwn(unit.complete, message.argument)
            ? unit.complete[message.argument]
            : undefined;
        if (complete === undefined) throw new Error(`no completion for "${message.argument}" in the worker`);
        return complete(message.value, { ...context, arguments: message.arguments });
      }
    }
  }

  #context(data: UnitContextData, signal: AbortSignal): UnitContext {
    return {
      signal,
      ...(data.sessionId === undefined ? {} : { sessionId: data.sessionId }),
      ...(data.mode === undefined ? {} : { mode: data.mode }),
      ...(data.input === undefined ? {} : { input: data.input }),
    };
  }

  #watch(id: number, name: string, uri: string): void {
    const resource = this.#resources.get(name);
    if (resource?.resource.subscribe === undefined) return;
    try {
      const stop = resource.resource.subscribe(uri, () => {
        if (this.#watches.has(id)) this.send({ type: 'unit-changed', id });
      });
      this.#watches.set(id, typeof stop === 'function' ? stop : undefined);
    } catch (error) {
      this.logger.addError(
        '[IsolatedPackage_Subscribe__Failed]',
        `Resource "${name}" could not start watching ${uri} in its isolated worker: ${describeThrown(error)}.`,
      );
    }
  }
}
