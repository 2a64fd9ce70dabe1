/**
 * The host's side of an isolated package's prompts and resources: a proxy per unit, built from the
 * static side a worker reported, which the host registers like an in-process package's (its registry
 * checks it against the contract again). Its `render`, `read`, `complete` and `subscribe` ask a worker;
 * the host's `renderPrompt`/`readResource` validate the arguments first, bound the request in time (the
 * signal they pass aborts it in the worker) and check what comes back. A worker that ends, or stays busy
 * past a cancelled request, fails only the requests it held, and is replaced as for a tool call.
 */
import type { CompleteFunction, DefinedPrompt, DefinedResource, UnitContext } from '@aptix/tool-contract';
import {
  unitContextData,
  type IsolatedPromptMeta,
  type IsolatedResourceMeta,
  type UnitRequest,
} from './unit-protocol.js';

/** What the proxies need of the pool. */
export interface UnitChannel {
  /** Runs `request` in a worker: resolves with what the unit's function returned, rejects with what it threw. */
  request(request: UnitRequest, signal: AbortSignal): Promise<unknown>;
  /** Watches a subscribable resource in every worker; returns what stops it. */
  watch(name: string, uri: string, changed: () => void): () => void;
}

/** What a unit's function threw in its worker: described there, so the host's message reads as in process. */
export class WorkerUnitError extends Error {
  override readonly name = '';
}

const list = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/** Copies only the fields a unit may have: the host's registry checks each. */
function fields(meta: object, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value = (meta as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * The proxies of the units a worker reported. Nothing in the report is trusted: malformed entries are
 * made into what the host's registry then refuses with a message naming the rule.
 */
export function isolatedUnits(
  report: { readonly prompts?: unknown; readonly resources?: unknown },
  channel: UnitChannel,
): { prompts: DefinedPrompt[]; resources: DefinedResource[] } {
  const prompts = (Array.isArray(report.prompts) ? (report.prompts as unknown[]) : []).map((meta) =>
    promptProxy(meta as IsolatedPromptMeta, channel),
  );
  const resources = (Array.isArray(report.resources) ? (report.resources as unknown[]) : []).map((meta) =>
    resourceProxy(meta as IsolatedResourceMeta, channel),
  );
  return { prompts, resources };
}

function completions(
  kind: 'prompt' | 'resource',
  name: string,
  names: unknown,
  channel: UnitChannel,
): Record<string, CompleteFunction> {
  return Object.fromEntries(
    list(names).map((argument): [string, CompleteFunction] => [
      argument,
      (value, context) =>
        channel.request(
          {
            op: 'complete',
            kind,
            name,
            argument,
            value,
            arguments: { ...context.arguments },
            context: unitContextData(context),
          },
          context.signal,
        ) as Promise<readonly string[]>,
    ]),
  );
}

function promptProxy(meta: IsolatedPromptMeta, channel: UnitChannel): DefinedPrompt {
  const name = meta.name;
  const complete = completions('prompt', name, meta.completes, channel);
  return Object.freeze({
    ...fields(meta, ['name', 'title', 'description', 'args', 'modes']),
    ...(Object.keys(complete).length === 0 ? {} : { complete }),
    kind: 'prompt' as const,
    render: (args: Record<string, string>, context: UnitContext) =>
      channel.request(
        { op: 'render', name, args: { ...args }, context: unitContextData(context) },
        context.signal,
      ) as never,
  }) as unknown as DefinedPrompt;
}

function resourceProxy(meta: IsolatedResourceMeta, channel: UnitChannel): DefinedResource {
  const name = meta.name;
  const complete = completions('resource', name, meta.completes, channel);
  return Object.freeze({
    ...fields(meta, ['name', 'title', 'description', 'mimeType', 'uri', 'uriTemplate', 'modes', 'annotations']),
    ...(Object.keys(complete).length === 0 ? {} : { complete }),
    kind: 'resource' as const,
    read: ({ uri, variables }: { uri: string; variables: Readonly<Record<string, string>> }, context: UnitContext) =>
      channel.request(
        { op: 'read', name, uri, variables: { ...variables }, context: unitContextData(context) },
        context.signal,
      ) as never,
    ...(meta.subscribable === true
      ? { subscribe: (uri: string, changed: () => void) => channel.watch(name, uri, changed) }
      : {}),
  }) as unknown as DefinedResource;
}

interface OpenRequest {
  readonly worker: object;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly signal: AbortSignal;
  readonly onAbort: () => void;
}

/**
 * The pool's open unit requests and watches. An answer is taken only from the worker that was asked; a
 * worker that ends fails the requests it held with the reason.
 */
export class UnitRequests {
  readonly #open = new Map<number, OpenRequest>();
  readonly #watches = new Map<number, { name: string; uri: string; changed: () => void }>();

  /**
   * Waits for the worker's answer to request `id`. When the signal aborts (the host's time limit, the
   * caller), `onAbort` tells the worker and the request is let go: its answer, if one comes, is dropped.
   */
  open(id: number, request: { worker: object; signal: AbortSignal; onAbort: () => void }): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const open = this.#open.get(id);
        if (open === undefined) return;
        this.#close(id, open);
        request.onAbort();
        open.reject(new WorkerUnitError('the request was cancelled'));
      };
      this.#open.set(id, { worker: request.worker, signal: request.signal, onAbort, resolve, reject });
      if (request.signal.aborted) queueMicrotask(onAbort);
      else request.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A worker's answer: nothing in it is trusted. */
  answer(worker: object, message: { id?: unknown; ok?: unknown; value?: unknown; message?: unknown }): void {
    const open = typeof message.id === 'number' ? this.#open.get(message.id) : undefined;
    if (open === undefined || open.worker !== worker) return;
    this.#close(message.id as number, open);
    if (message.ok === true) open.resolve(message.value);
    else
      open.reject(
        new WorkerUnitError(
          typeof message.message === 'string' ? message.message.slice(0, 1000) : 'its worker sent no reason',
        ),
      );
  }

  /** The worker ended: its requests fail, saying why. */
  ended(worker: object, why: string): void {
    for (const [id, open] of this.#open) {
      if (open.worker !== worker) continue;
      this.#close(id, open);
      open.reject(new WorkerUnitError(`its isolated worker ${why}, and was replaced; trying again should work`));
    }
  }

  #close(id: number, open: OpenRequest): void {
    this.#open.delete(id);
    open.signal.removeEventListener('abort', open.onAbort);
  }

  addWatch(id: number, name: string, uri: string, changed: () => void): void {
    this.#watches.set(id, { name, uri, changed });
  }

  removeWatch(id: number): boolean {
    return this.#watches.delete(id);
  }

  /** Every watch now, to start in a fresh worker. */
  watches(): Array<{ id: number; name: string; uri: string }> {
    return [...this.#watches].map(([id, { name, uri }]) => ({ id, name, uri }));
  }

  /** A worker said the package called `changed()` for watch `id`. */
  changed(message: { id?: unknown }): void {
    const watch = typeof message.id === 'number' ? this.#watches.get(message.id) : undefined;
    watch?.changed();
  }
}
