import type {
  AgentSession,
  AgentSessionManager,
  CreateSessionInput,
  SetSessionModeOptions,
  SetSessionModeResult,
} from '@aptix/agent-sessions';

/** One recorded call of `setSessionMode`, argument by argument. */
export type SetSessionModeCall = readonly [
  sessionId: string,
  mode: string,
  reason: string,
  org: string | null | undefined,
  user: string | null | undefined,
  options: SetSessionModeOptions | undefined,
];

/**
 * An in-memory AgentSessionManager for the tool's tests (TUL-007 §6): it records every
 * `setSessionMode` call, refuses unknown modes and sessions as the real stores do, and can be told to throw.
 */
export class FakeSessionManager implements AgentSessionManager {
  readonly calls: SetSessionModeCall[] = [];
  readonly #sessions = new Map<string, AgentSession>();
  #failWith: unknown;
  #delayMs = 0;

  constructor(
    readonly modes: readonly string[] = ['general', 'ddr_authoring', 'tool_diagnostics'],
    sessionIds: readonly string[] = ['session-1'],
  ) {
    for (const id of sessionIds)
      this.#sessions.set(id, {
        id,
        mode: modes[0]!,
        org: null,
        user: null,
        owner: null,
        parentId: null,
        createdAt: new Date(0).toISOString(),
        history: [],
      });
  }

  /** Makes every later `setSessionMode` call throw (or reject with) `error`. */
  failWith(error: unknown): this {
    this.#failWith = error;
    return this;
  }

  /**
   * Makes every later `setSessionMode` take `ms` before it saves, ignoring its signal: a session manager
   * that does not take the signal, so an abort cannot stop it.
   */
  slowBy(ms: number): this {
    this.#delayMs = ms;
    return this;
  }

  async createSession(input: CreateSessionInput): Promise<AgentSession> {
    // A branch belongs to its parent's owner, as in the real stores.
    const owner = input.parentId ? (this.#sessions.get(input.parentId)?.owner ?? null) : (input.owner ?? null);
    const session: AgentSession = {
      id: `session-${this.#sessions.size + 1}`,
      mode: input.mode ?? this.modes[0]!,
      org: input.org ?? null,
      user: input.user ?? null,
      owner,
      parentId: input.parentId ?? null,
      createdAt: new Date().toISOString(),
      history: [],
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  async getSession(id: string): Promise<AgentSession | undefined> {
    return this.#sessions.get(id);
  }

  async setSessionMode(
    sessionId: string,
    mode: string,
    reason: string,
    org: string | null | undefined,
    user: string | null | undefined,
    options?: SetSessionModeOptions,
  ): Promise<SetSessionModeResult> {
    this.calls.push([sessionId, mode, reason, org, user, options]);
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the fake throws what the test hands it, non-Errors too, as a broken store might
    if (this.#failWith !== undefined) throw this.#failWith;
    if (this.#delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.#delayMs));
    const session = this.#sessions.get(sessionId);
    if (session === undefined)
      return {
        applied: false,
        code: 'SESSION_NOT_FOUND',
        message: `Session "${sessionId}" does not exist; the mode was not changed.`,
      };
    if (!this.modes.includes(mode))
      return {
        applied: false,
        code: 'UNKNOWN_MODE',
        message: `Unknown mode "${mode}". Valid modes: ${this.modes.join(', ')}.`,
      };
    const change = {
      fromMode: session.mode,
      toMode: mode,
      reason,
      branch: options?.branch ?? false,
      org: org ?? null,
      user: user ?? null,
      at: new Date().toISOString(),
    };
    const updated: AgentSession = { ...session, mode, history: [...session.history, change] };
    this.#sessions.set(sessionId, updated);
    return { applied: true, session: updated, change };
  }
}
