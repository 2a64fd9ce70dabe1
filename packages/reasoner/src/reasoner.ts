import type { AgentSession } from '@aptix/agent-sessions';
import { silentAdminLogger, type AdminLogger, type AgentToolExecutionContext } from '@aptix/tool-contract';
import type { ModeCatalog } from '@aptix/tool-mode-catalog';
import type OpenAI from 'openai';
import type { ResponseCreateParamsBase } from 'openai/resources/responses/responses';
import {
  functionCallsOf,
  inspectConversation,
  textOf,
  toModelInput,
  type ConversationItem,
  type PendingToolCall,
} from './conversation.js';
import type { ReasonerEvent, ReasonerEventListener } from './events.js';
import { buildModePrompts, DEFAULT_BOOT_PROMPT, type ModePrompt, type ReasonerToolRegistry } from './instructions.js';
import { callModel } from './model-call.js';
import { tracedModelCall, tracedTurn } from './reasoner-telemetry.js';
import { approvalIdOf } from './approvals.js';
import { createOpenAIClient, resolveModelConnection } from './model-config.js';
import { ReasonerError, ReasonerErrorCode } from './reasoner-error.js';
import { SessionQueue } from './session-queue.js';
import type { TurnResult, TurnStatus, TurnToolCall } from './turn.js';
import { runCalls, type TurnCallDeps } from './turn-calls.js';
import type { ToolOutputSubmission } from './tool-outputs.js';
import { openTurn, recordOutcomes, requireSession, type TurnStart } from './turn-conversation.js';
import { findClientExecutedTools, revisionOf } from './client-tools.js';
import { deferredModeKeys } from './deferred-modes.js';
import {
  DEFAULT_MAX_STEPS,
  type ModelSettings,
  type ReasonerOptions,
  type ReasonerSessionStore,
  type TurnOptions,
} from './reasoner-options.js';
import { CANCELLED, joinText, pausedStatus, stepLimitMessage } from './turn-endings.js';

export type { ToolOutputSubmission } from './tool-outputs.js';
export {
  DEFAULT_MAX_STEPS,
  type ModelSettings,
  type ReasonerOptions,
  type ReasonerSessionStore,
  type TurnOptions,
} from './reasoner-options.js';
export { MODE_CHANGE_TOOL } from './turn-endings.js';

/**
 * The agent loop over the OpenAI Responses API (issue 8, AGN-005 §1, §7.2.3, §9): offers the session's
 * mode's tools to the model with their usage guidance, runs the calls the model makes through the
 * executor, feeds the results back, and repeats until the model answers. Conversations live in the
 * session store, and every request carries the whole conversation with `store: false`, so any
 * compatible endpoint works and a restarted host carries on.
 *
 * Everything that can be checked is checked in the constructor: the model connection, every mode's
 * tools and their usage metadata, and which tools the client completes.
 */
export class Reasoner {
  /** The model every call names. */
  readonly model: string;
  /** The endpoint's base URL, as named in error messages. */
  readonly endpoint: string;
  readonly maxSteps: number;
  #clientExecutedTools: ReadonlySet<string>;

  readonly #client: OpenAI;
  readonly #sessions: ReasonerSessionStore;
  readonly #catalog: ModeCatalog;
  #prompts: ReadonlyMap<string, ModePrompt>;
  readonly #registry: ReasonerToolRegistry;
  readonly #rebuild: () => { prompts: ReadonlyMap<string, ModePrompt>; clientTools: ReadonlySet<string> };
  /** The registry's revision the prompts were built at (undefined: a registry without one never changes). */
  #builtAt: number | undefined;
  readonly #stream: boolean;
  readonly #settings: ModelSettings;
  readonly #logger: AdminLogger;
  readonly #queue = new SessionQueue();
  #callDeps: TurnCallDeps;

  constructor(options: ReasonerOptions) {
    const { registry, executor, modeCatalog, sessions } = options;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (!registry || !executor || !modeCatalog || !sessions) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      const missing = (['registry', 'executor', 'modeCatalog', 'sessions'] as const).filter((name) => !options[name]);
      throw new ReasonerError(
        ReasonerErrorCode.INVALID_OPTION,
        `createReasoner needs ${missing.join(', ')}: pass the host's AgentToolRegistry, AgentToolExecutor, ModeCatalog and session store.`,
      );
    }
    // A client the host built brings its own endpoint and key; only the model name is still needed.
    const connection = resolveModelConnection(
      options.client === undefined
        ? // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
          (options.model ?? {})
        : { ...options.model, baseURL: options.client.baseURL, apiKey: options.client.apiKey || 'from-client' },
    );
    const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
    if (!Number.isInteger(maxSteps) || maxSteps < 1) {
      throw new ReasonerError(
        ReasonerErrorCode.INVALID_OPTION,
        `maxSteps must be a whole number of model calls, 1 or more; got ${String(maxSteps)}.`,
      );
    }
    this.#logger = options.logger ?? silentAdminLogger;
    this.#client = options.client ?? createOpenAIClient(connection);
    this.model = connection.model;
    this.endpoint = connection.baseURL;
    this.maxSteps = maxSteps;
    this.#sessions = sessions;
    this.#catalog = modeCatalog;
    this.#stream = options.stream ?? true;
    this.#settings = { ...options.modelSettings };
    const createTool = options.createTool ?? ((toolClass) => new toolClass({ logger: this.#logger }));
    this.#registry = registry;
    const deferred = deferredModeKeys(options.deferred, modeCatalog);
    this.#rebuild = () => {
      const prompts = buildModePrompts(
        registry,
        modeCatalog,
        options.bootPrompt ?? DEFAULT_BOOT_PROMPT,
        options.offeredTools,
        deferred,
      );
      return { prompts, clientTools: findClientExecutedTools(registry, prompts, createTool) };
    };
    this.#builtAt = revisionOf(registry);
    const built = this.#rebuild();
    this.#prompts = built.prompts;
    this.#clientExecutedTools = built.clientTools;
    this.#callDeps = { executor, sessions, prompts: this.#prompts, clientExecutedTools: this.#clientExecutedTools };
  }

  /** Tools whose `isToolFullyExecutedOnServer` is false: their calls end the turn and wait for the client. */
  get clientExecutedTools(): ReadonlySet<string> {
    this.#follow();
    return this.#clientExecutedTools;
  }

  /**
   * Builds the mode prompts again when the registry changed since (tools added or removed while the
   * host runs). If they cannot be built (a new tool's guide would break the prompt), the last ones stay
   * and the reason is logged: a turn never fails because a tool package changed its tools.
   */
  #follow(): void {
    const revision = revisionOf(this.#registry);
    if (revision === this.#builtAt) return;
    this.#builtAt = revision;
    try {
      const built = this.#rebuild();
      this.#prompts = built.prompts;
      this.#clientExecutedTools = built.clientTools;
      this.#callDeps = { ...this.#callDeps, prompts: built.prompts, clientExecutedTools: built.clientTools };
    } catch (error) {
      this.#logger.addException('[Reasoner_ToolsChanged__PromptsKept]', error, [['Revision', String(revision)]]);
    }
  }

  /**
   * The instructions and tools a model call in `mode` carries.
   * @throws {ReasonerError} `UNKNOWN_SESSION_MODE` for a mode the catalog does not have.
   */
  promptFor(mode: string): ModePrompt {
    this.#follow();
    const prompt = this.#prompts.get(mode);
    if (prompt === undefined) {
      throw new ReasonerError(
        ReasonerErrorCode.UNKNOWN_SESSION_MODE,
        `Mode "${mode}" is not in mode catalog ${this.#catalog.source} (modes: ${this.#catalog.keys.join(', ')}).`,
      );
    }
    return prompt;
  }

  /**
   * Runs one turn: appends the user's message to the session's conversation, then calls the model and
   * runs its tool calls until it answers, a client tool must finish the work, the step limit is reached,
   * or `signal` aborts. Tool failures go back to the model; only problems no model can fix throw.
   *
   * @throws {ReasonerError} `SESSION_NOT_FOUND`, `INVALID_INPUT`, `PENDING_TOOL_CALLS`, `MODEL_REQUEST_FAILED`, `MODEL_RESPONSE_FAILED`.
   * @example
   * const result = await reasoner.runTurn(sessionId, 'What is 2 + 3?', { signal, onEvent: (e) => e.type === 'text_delta' && process.stdout.write(e.delta) });
   */
  runTurn(sessionId: string, input: string, options: TurnOptions = {}): Promise<TurnResult> {
    if (typeof input !== 'string' || input.trim() === '') {
      return Promise.reject(
        new ReasonerError(
          ReasonerErrorCode.INVALID_INPUT,
          'The message is empty: send { "input": "<the user\'s message>" } with some text.',
        ),
      );
    }
    return this.#queue.run(sessionId, () =>
      tracedTurn(sessionId, this.model, () => this.#start(sessionId, { kind: 'message', input }, options)),
    );
  }

  /**
   * Answers pending calls of client-executed tools and, once none is left, resumes the turn. With some
   * calls still unanswered it records the outputs given and returns `pending_tool_calls` again.
   *
   * @throws {ReasonerError} `SESSION_NOT_FOUND`, `INVALID_INPUT`, `UNKNOWN_TOOL_CALL`, and the model errors of {@link runTurn}.
   * @example
   * await reasoner.submitToolOutputs(sessionId, [{ callId: 'call_1', output: { applied: true } }]);
   */
  submitToolOutputs(
    sessionId: string,
    outputs: readonly ToolOutputSubmission[],
    options: TurnOptions = {},
  ): Promise<TurnResult> {
    if (!Array.isArray(outputs) || outputs.length === 0) {
      return Promise.reject(
        new ReasonerError(
          ReasonerErrorCode.INVALID_INPUT,
          'No tool outputs were given: send { "outputs": [{ "callId": "...", "output": ... }] } with one entry per pending call.',
        ),
      );
    }
    return this.#queue.run(sessionId, () =>
      tracedTurn(sessionId, this.model, () => this.#start(sessionId, { kind: 'outputs', outputs }, options)),
    );
  }

  /** The calls of `sessionId` waiting for the client, in call order (`[]` when none). */
  async pendingToolCalls(sessionId: string): Promise<PendingToolCall[]> {
    await this.#requireSession(sessionId);
    const { pending } = inspectConversation(await this.#sessions.listConversationItems(sessionId));
    return pending.map((call) => ({ ...call, sessionId }));
  }

  /**
   * Continues a turn paused with `waiting_for_approval` once every approval it waits for is decided: the
   * model reads each call's result, or that the person declined it (with their note), and the turn goes
   * on. While one is still undecided it answers `waiting_for_approval` again, changing nothing.
   *
   * @throws {ReasonerError} `SESSION_NOT_FOUND`, `INVALID_INPUT` (nothing waits for approval, or no `approvals` given), and the model errors of {@link runTurn}.
   */
  resumeApprovals(sessionId: string, options: TurnOptions): Promise<TurnResult> {
    const { approvals } = options;
    if (approvals === undefined)
      return Promise.reject(
        new ReasonerError(
          ReasonerErrorCode.INVALID_INPUT,
          'resumeApprovals needs the approvals of the turn (options.approvals).',
        ),
      );
    return this.#queue.run(sessionId, async () => {
      const session = await this.#requireSession(sessionId);
      const { pending } = inspectConversation(await this.#sessions.listConversationItems(sessionId));
      const waiting = pending.flatMap((call) => {
        const approvalId = approvalIdOf(call.serverResult);
        return approvalId === undefined ? [] : [{ call, approvalId }];
      });
      if (waiting.length === 0)
        throw new ReasonerError(
          ReasonerErrorCode.INVALID_INPUT,
          `Session ${sessionId} has no tool call waiting for approval.`,
        );
      const outcomes = await Promise.all(waiting.map(({ approvalId }) => approvals.outcome(approvalId)));
      if (outcomes.some((outcome) => outcome === undefined)) {
        const emit = this.#emitter(options.onEvent, options.logger ?? this.#logger);
        const still = waiting.map(({ call }) => ({ ...call, sessionId }));
        return this.#finish(
          {
            origin: session,
            active: session,
            status: 'waiting_for_approval',
            output: '',
            steps: 0,
            toolCalls: [],
            pending: still,
          },
          emit,
        );
      }
      const outputs: ToolOutputSubmission[] = waiting.map(({ call }, index) => {
        const outcome = outcomes[index]!;
        return outcome.successful
          ? { callId: call.callId, output: outcome.output }
          : { callId: call.callId, error: outcome.error };
      });
      return this.#start(sessionId, { kind: 'outputs', outputs, approved: true }, options);
    });
  }

  async #start(sessionId: string, start: TurnStart, options: TurnOptions): Promise<TurnResult> {
    const session = await this.#requireSession(sessionId);
    this.promptFor(session.mode); // a mode the catalog lost fails here, before anything is written
    const emit = this.#emitter(options.onEvent, options.logger ?? this.#logger);
    const opening = await openTurn(this.#sessions, sessionId, start, options.signal);
    if (opening.kind === 'cancelled')
      return this.#finish(
        {
          origin: session,
          active: session,
          status: 'cancelled',
          output: CANCELLED,
          steps: 0,
          toolCalls: [],
          pending: [],
        },
        emit,
      );
    if (opening.kind === 'paused')
      return this.#finish(
        {
          origin: session,
          active: session,
          status: pausedStatus(opening.pending),
          output: '',
          steps: 0,
          toolCalls: [],
          pending: opening.pending,
        },
        emit,
      );
    return this.#loop(session, options, emit);
  }

  async #loop(origin: AgentSession, options: TurnOptions, emit: ReasonerEventListener): Promise<TurnResult> {
    const { signal } = options;
    const conversationId = options.conversationId ?? origin.id;
    const toolCalls: TurnToolCall[] = [];
    let active = origin;
    let steps = 0;
    let lastText = '';
    const end = (status: TurnStatus, output: string, pending: PendingToolCall[] = []) =>
      this.#finish({ origin, active, status, output, steps, toolCalls, pending }, emit);
    emit({ type: 'turn_started', sessionId: origin.id, mode: origin.mode });

    for (;;) {
      if (signal?.aborted) return end('cancelled', CANCELLED);
      if (steps >= this.maxSteps) {
        (options.logger ?? this.#logger).addCustomEvent(
          'warn',
          '[Reasoner_Turn__StepLimit]',
          `The turn stopped at the step limit of ${this.maxSteps} model calls.`,
          [['SessionId', active.id]],
        );
        return end('step_limit', joinText(lastText, stepLimitMessage(this.maxSteps)));
      }
      const session = await this.#requireSession(active.id);
      active = session;
      const prompt = this.promptFor(session.mode);
      steps += 1;
      emit({ type: 'model_request', sessionId: session.id, mode: session.mode, step: steps });
      const input = toModelInput(await this.#sessions.listConversationItems(session.id));
      let streamedText = '';
      const reply = await tracedModelCall(this.model, this.endpoint, () =>
        callModel(
          this.#client,
          {
            ...this.#settings,
            model: this.model,
            instructions: prompt.instructions,
            input,
            tools: prompt.tools as ResponseCreateParamsBase['tools'],
            store: false,
          },
          {
            stream: this.#stream,
            signal,
            endpoint: this.endpoint,
            onTextDelta: (delta) => {
              streamedText += delta;
              emit({ type: 'text_delta', sessionId: session.id, delta });
            },
          },
        ),
      );
      if (reply === undefined) return end('cancelled', CANCELLED);
      await this.#sessions.appendConversationItems(session.id, reply.output as unknown as ConversationItem[]);
      lastText = textOf(reply.output) || streamedText;
      const calls = functionCallsOf(reply.output);
      if (calls.length === 0) return end('completed', lastText);

      const context: AgentToolExecutionContext = {
        sessionId: session.id,
        conversationId,
        org: session.org ?? undefined,
        user: session.user ?? undefined,
        mode: session.mode,
      };
      const logger = options.logger ?? this.#logger;
      this.#follow();
      const outcomes = await runCalls(
        this.#callDeps,
        calls,
        context,
        { signal, logger, progress: options.onEvent !== undefined },
        emit,
        options.approvals,
      );
      active = await recordOutcomes(this.#sessions, session, outcomes, emit, logger);
      for (const outcome of outcomes) {
        if (!outcome.pending)
          toolCalls.push({
            callId: outcome.call.callId,
            name: outcome.call.name,
            arguments: outcome.call.arguments,
            successful: outcome.successful,
            output: outcome.output,
            sessionId: session.id,
          });
      }
      const pending = outcomes.filter((outcome) => outcome.pending);
      if (pending.length > 0) {
        return end(
          pausedStatus(pending.map((outcome) => ({ serverResult: outcome.output }))),
          lastText,
          pending.map((outcome) => ({ ...outcome.call, sessionId: active.id, serverResult: outcome.output })),
        );
      }
    }
  }

  async #finish(
    turn: {
      origin: AgentSession;
      active: AgentSession;
      status: TurnStatus;
      output: string;
      steps: number;
      toolCalls: TurnToolCall[];
      pending: PendingToolCall[];
    },
    emit: ReasonerEventListener,
  ): Promise<TurnResult> {
    const current = (await this.#sessions.getSession(turn.active.id)) ?? turn.active;
    const result: TurnResult = {
      sessionId: turn.origin.id,
      ...(turn.active.id === turn.origin.id ? {} : { branchedSessionId: turn.active.id }),
      mode: current.mode,
      status: turn.status,
      output: turn.output,
      toolCalls: turn.toolCalls,
      pendingToolCalls: turn.pending,
      steps: turn.steps,
    };
    emit({ type: 'turn_ended', result });
    return result;
  }

  #requireSession(sessionId: string): Promise<AgentSession> {
    return requireSession(this.#sessions, sessionId);
  }

  #emitter(listener: ReasonerEventListener | undefined, logger: AdminLogger): ReasonerEventListener {
    if (listener === undefined) return () => {};
    return (event: ReasonerEvent) => {
      try {
        listener(event);
      } catch (error) {
        logger.addException('[Reasoner_OnEvent__Exception]', error, [['Event', event.type]]);
      }
    };
  }
}

/**
 * Builds a {@link Reasoner}, checking the whole configuration first.
 * @throws {ReasonerError} `MODEL_NOT_CONFIGURED`, `API_KEY_MISSING`, `USAGE_METADATA_MISSING`, `CATALOG_MISMATCH`, `TOOL_UNAVAILABLE`, `INVALID_OPTION`.
 * @example
 * const reasoner = createReasoner({
 *   registry, executor, modeCatalog, sessions: store,
 *   model: { baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY, model: process.env.APTIX_MODEL },
 *   createTool: (toolClass) => container.build(toolClass),
 * });
 * const { output } = await reasoner.runTurn(session.id, 'Greet me, I am Ada.');
 */

export function createReasoner(options: ReasonerOptions): Reasoner {
  return new Reasoner(options);
}
