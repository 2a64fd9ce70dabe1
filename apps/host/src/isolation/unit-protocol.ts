/**
 * The messages by which an isolated package's prompts and resources cross between the host and its
 * workers. The worker reports each unit's static side when it is ready; the host registers a proxy for
 * it (checked against the contract again) whose `render`, `read`, `complete` and `subscribe` ask a
 * worker. Nothing a worker sends is trusted: the host's own `renderPrompt`/`readResource` check every
 * answer as they check an in-process package's.
 */
import type { JsonSchema, ResourceAnnotations, ToolInputChannel } from '@aptix/tool-contract';

/** A prompt's static side, as the worker's registry read it. */
export interface IsolatedPromptMeta {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  /** The arguments' schema as plain JSON. */
  readonly args: JsonSchema;
  readonly modes?: readonly string[];
  /** The arguments with a `complete` function (it stays in the worker). */
  readonly completes: readonly string[];
}

/** A resource's static side, as the worker's registry read it. */
export interface IsolatedResourceMeta {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType: string;
  readonly uri?: string;
  readonly uriTemplate?: string;
  readonly modes?: readonly string[];
  readonly annotations?: ResourceAnnotations;
  /** The template variables with a `complete` function. */
  readonly completes: readonly string[];
  /** Whether it has a `subscribe` hook. */
  readonly subscribable: boolean;
}

/** What a unit's function knows of the request, as data (its signal is rebuilt in the worker). */
export interface UnitContextData {
  readonly sessionId?: string;
  readonly mode?: string;
  /** A render's input channel: what the caller can answer, its answers and the prompt's state. */
  readonly input?: ToolInputChannel;
}

/** One request, as the host sends it (`id` numbers it among the pool's). */
export type UnitRequest =
  | {
      readonly op: 'render';
      readonly name: string;
      readonly args: Readonly<Record<string, string>>;
      readonly context: UnitContextData;
    }
  | {
      readonly op: 'read';
      readonly name: string;
      readonly uri: string;
      readonly variables: Readonly<Record<string, string>>;
      readonly context: UnitContextData;
    }
  | {
      readonly op: 'complete';
      readonly kind: 'prompt' | 'resource';
      readonly name: string;
      readonly argument: string;
      readonly value: string;
      readonly arguments: Readonly<Record<string, string>>;
      readonly context: UnitContextData;
    };

export type UnitHostMessage =
  | ({ readonly type: 'unit'; readonly id: number } & UnitRequest)
  /** The request's caller went away or the host's time limit passed: abort its signal in the worker. */
  | { readonly type: 'unit-cancel'; readonly id: number }
  /** Start watching a subscribable resource at `uri` (each worker watches, a fresh one too). */
  | { readonly type: 'unit-watch'; readonly id: number; readonly name: string; readonly uri: string }
  | { readonly type: 'unit-unwatch'; readonly id: number };

export type UnitWorkerMessage =
  /** What the unit's function returned (structured-cloned), or the message of what it threw. */
  | { readonly type: 'unit'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly type: 'unit'; readonly id: number; readonly ok: false; readonly message: string }
  /** The package called `changed()` for the watch `id`. */
  | { readonly type: 'unit-changed'; readonly id: number };

/** The request context's data: its functions (the signal) stay behind and are rebuilt in the worker. */
export function unitContextData(context: {
  readonly sessionId?: string;
  readonly mode?: string;
  readonly input?: ToolInputChannel;
}): UnitContextData {
  const { sessionId, mode, input } = context;
  return {
    ...(typeof sessionId === 'string' ? { sessionId } : {}),
    ...(typeof mode === 'string' ? { mode } : {}),
    ...(input === undefined ? {} : inputCopy(input)),
  };
}

/** The input channel as data; one that cannot be written as JSON is left behind (the render then answers as for a caller that cannot ask). */
function inputCopy(input: ToolInputChannel): { input?: ToolInputChannel } {
  try {
    return {
      input: JSON.parse(
        JSON.stringify({
          canAsk: input.canAsk === true,
          canSample: input.canSample === true,
          canListRoots: input.canListRoots === true,
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers can bring what the type rules out
          responses: input.responses ?? {},
          ...(input.state === undefined ? {} : { state: input.state }),
        }),
      ) as ToolInputChannel,
    };
  } catch {
    return {};
  }
}
