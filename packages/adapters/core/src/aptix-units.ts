import {
  completeUnit,
  ExecutionErrorCode,
  PromptRegistry,
  readResource,
  renderPrompt,
  ResourceRegistry,
  UnitErrorCode,
  uriProblem,
  type PromptArgumentListing,
  type PromptMessage,
  type RegisteredPrompt,
  type RegisteredResource,
  type ResourceContents,
  type UnitCallOptions,
  type UnitOutcome,
} from '@aptix/tool-contract';
import { AdapterErrorCode } from './adapter-errors.js';
import { AdapterSetupError } from './tool-sources.js';
import type { AptixSessionScope } from './aptix-tools-options.js';

/** A prompt as a framework lists it. */
export interface PromptDescription {
  readonly name: string;
  readonly title: string | undefined;
  readonly description: string;
  readonly arguments: readonly PromptArgumentListing[];
}

/** A resource as a framework lists it: at a fixed `uri`, or at the URIs of a `uriTemplate`. */
export interface ResourceDescription {
  readonly name: string;
  readonly title: string | undefined;
  readonly description: string | undefined;
  readonly mimeType: string;
  readonly uri?: string;
  readonly uriTemplate?: string;
}

/** A rendered prompt: its description and messages, as MCP's `prompts/get` answers. */
export interface RenderedPrompt {
  readonly description: string;
  readonly messages: PromptMessage[];
}

/**
 * The outcome of a render, read or completion: its value, or a failure with a stable code
 * (`PROMPT_NOT_FOUND`, `INVALID_ARGUMENTS`, `RENDER_FAILED`, `TIMEOUT`, `SESSION_NOT_FOUND`, …) and a
 * message that names what is wrong. Never an exception.
 */
export type UnitResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly code: string; readonly message: string };

/** Options of one request. */
export interface UnitRequestOptions {
  /** The framework's signal: its abort stops the render or read. */
  readonly signal?: AbortSignal | undefined;
}

/** A failed request. */
type Failure = Extract<UnitResult<never>, { ok: false }>;
/** The session's mode now, or the failure that stops the request. */
type Scope = { mode: string | undefined; sessionId: string | undefined } | { failure: Failure };

/**
 * Prompts and resources made ready for a framework: checked by the contract's registries when the
 * adapter is made, offered in the session's current mode (a unit's `modes`; every unit without a
 * session), and rendered or read by the contract's `renderPrompt`/`readResource`, which validate the
 * arguments (naming the field), bound the work in time and size, and check what comes back.
 *
 * @example
 * const aptix = await createAptixTools({ tools: [myPackage] });
 * const rendered = await aptix.units.render('acme_summarize', { text: '…' });
 * if (rendered.ok) console.log(rendered.value.messages);
 */
export class AptixUnits {
  constructor(
    readonly prompts: PromptRegistry,
    readonly resources: ResourceRegistry,
    private readonly session: AptixSessionScope | undefined,
    private readonly options: { readonly timeoutMs?: number } = {},
  ) {}

  /** No prompts or resources. */
  static none(session: AptixSessionScope | undefined): AptixUnits {
    return new AptixUnits(new PromptRegistry(), new ResourceRegistry(), session);
  }

  /** The prompts offered now. @throws {AdapterSetupError} the session's store cannot be read, or the session is gone. */
  async listPrompts(): Promise<PromptDescription[]> {
    const mode = await this.#modeOrThrow();
    return this.prompts
      .list()
      .filter((prompt) => offered(prompt, mode))
      .map(({ name, title, description, arguments: args }) => ({ name, title, description, arguments: args }));
  }

  /** The resources offered now, fixed URIs and templates. @throws {Error} as {@link listPrompts}. */
  async listResources(): Promise<ResourceDescription[]> {
    const mode = await this.#modeOrThrow();
    return this.resources
      .list()
      .filter((resource) => offered(resource, mode))
      .map(({ name, title, description, mimeType, uri, template }) => ({
        name,
        title,
        description,
        mimeType,
        ...(uri === undefined ? { uriTemplate: template!.template } : { uri }),
      }));
  }

  /** Renders prompt `name` with `args` (strings, checked against its schema). Never throws. */
  async render(
    name: string,
    args: unknown = {},
    options: UnitRequestOptions = {},
  ): Promise<UnitResult<RenderedPrompt>> {
    const scope = await this.#scope();
    if ('failure' in scope) return scope.failure;
    const prompt = this.prompts.get(name);
    if (prompt === undefined || !offered(prompt, scope.mode)) return this.#promptNotFound(name, scope.mode);
    return outcome(await renderPrompt(prompt, args, this.#callOptions(scope, options)));
  }

  /** Reads the resource at `uri` (a fixed URI, or one a template matches). Never throws. */
  async read(uri: string, options: UnitRequestOptions = {}): Promise<UnitResult<ResourceContents[]>> {
    const scope = await this.#scope();
    if ('failure' in scope) return scope.failure;
    if (typeof uri !== 'string' || uri === '')
      return fail(UnitErrorCode.INVALID_URI, 'Give the URI of the resource to read, e.g. "acme://docs/readme".');
    const problem = uriProblem(uri);
    if (problem !== undefined)
      return fail(UnitErrorCode.INVALID_URI, `Cannot read ${JSON.stringify(uri.slice(0, 200))}: ${problem}.`);
    const found = this.resources.resolve(uri);
    if (found === undefined || !offered(found.resource, scope.mode)) {
      const uris = this.resources
        .list()
        .filter((resource) => offered(resource, scope.mode))
        .map((resource) => resource.uri ?? resource.template!.template);
      return fail(
        UnitErrorCode.RESOURCE_NOT_FOUND,
        `Unknown resource: ${JSON.stringify(String(uri).slice(0, 200))}${inMode(scope.mode)}. Resources: ${uris.join(', ') || 'none'}.`,
      );
    }
    return outcome(await readResource(found.resource, uri, found.variables, this.#callOptions(scope, options)));
  }

  /** Completions for a prompt's argument, or a resource template's variable (by its name or template). Never throws. */
  async complete(
    ref: { readonly prompt: string } | { readonly resource: string },
    argument: string,
    value: string,
    context: Readonly<Record<string, string>> = {},
    options: UnitRequestOptions = {},
  ): Promise<UnitResult<{ values: string[]; total: number; hasMore: boolean }>> {
    const scope = await this.#scope();
    if ('failure' in scope) return scope.failure;
    const unit =
      'prompt' in ref
        ? this.prompts.get(ref.prompt)
        : this.resources
            .templates()
            .find((resource) => resource.name === ref.resource || resource.template!.template === ref.resource);
    if (unit === undefined || !offered(unit, scope.mode))
      return 'prompt' in ref
        ? this.#promptNotFound(ref.prompt, scope.mode)
        : fail(
            UnitErrorCode.RESOURCE_NOT_FOUND,
            `Unknown resource template: ${JSON.stringify(String(ref.resource).slice(0, 200))}${inMode(scope.mode)}.`,
          );
    const names = unit.kind === 'prompt' ? unit.arguments.map((arg) => arg.name) : unit.template!.variables;
    if (!names.includes(argument))
      return fail(
        UnitErrorCode.INVALID_ARGUMENTS,
        `${unit.kind === 'prompt' ? 'Prompt' : 'Resource template'} "${unit.name}" has no ${unit.kind === 'prompt' ? 'argument' : 'variable'} "${String(argument).slice(0, 64)}". It has: ${names.join(', ') || 'none'}.`,
      );
    return outcome(await completeUnit(unit, argument, String(value), context, this.#callOptions(scope, options)));
  }

  #callOptions(scope: { mode: string | undefined; sessionId: string | undefined }, options: UnitRequestOptions) {
    return {
      ...(scope.mode === undefined ? {} : { mode: scope.mode }),
      ...(scope.sessionId === undefined ? {} : { sessionId: scope.sessionId }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(this.options.timeoutMs === undefined ? {} : { timeoutMs: this.options.timeoutMs }),
    } satisfies UnitCallOptions;
  }

  #promptNotFound(name: string, mode: string | undefined): Failure {
    const names = this.prompts
      .list()
      .filter((prompt) => offered(prompt, mode))
      .map((prompt) => prompt.name);
    return fail(
      UnitErrorCode.PROMPT_NOT_FOUND,
      `Unknown prompt: ${JSON.stringify(String(name).slice(0, 200))}${inMode(mode)}. Prompts: ${names.join(', ') || 'none'}.`,
    );
  }

  async #scope(): Promise<Scope> {
    if (this.session === undefined) return { mode: undefined, sessionId: undefined };
    const { sessionManager, sessionId } = this.session;
    try {
      const session = await sessionManager.getSession(sessionId);
      if (session === undefined)
        return {
          failure: fail(
            AdapterErrorCode.SESSION_NOT_FOUND,
            `Session ${sessionId} does not exist. Fix: create it with the session store first (sessionManager.createSession()).`,
          ),
        };
      return { mode: session.mode, sessionId };
    } catch {
      return {
        failure: fail(ExecutionErrorCode.TOOL_UNAVAILABLE, 'The session store could not be read. Try again later.'),
      };
    }
  }

  async #modeOrThrow(): Promise<string | undefined> {
    const scope = await this.#scope();
    if ('failure' in scope) throw new AdapterSetupError(scope.failure.message);
    return scope.mode;
  }
}

/** Whether the mode offers the unit: its `modes`, or every mode; everything without a session. */
function offered(unit: RegisteredPrompt | RegisteredResource, mode: string | undefined): boolean {
  return mode === undefined || unit.modes === undefined || unit.modes.includes(mode);
}

const inMode = (mode: string | undefined) => (mode === undefined ? '' : ` in mode "${mode}"`);

function fail(code: string, message: string): Failure {
  return { ok: false, code, message };
}

/** The contract's outcome, without what only an MCP client can answer (a render's questions are a failure here). */
function outcome<T>(result: UnitOutcome<T>): UnitResult<T> {
  return result.ok ? { ok: true, value: result.value } : fail(result.code, result.message);
}
