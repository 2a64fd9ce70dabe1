/**
 * Issue 15's rule for agent_change_mode: a result says cancelled only when nothing was saved; a saved
 * change is reported as saved, and an outcome the store cannot know is reported as unknown.
 */
import { SessionStoreError, type SetSessionModeResult } from '@aptix/agent-sessions';
import { InvokeResult } from '@aptix/tool-contract';
import { CapturingAdminLogger, testContext } from '@aptix/tool-contract/testing';
import { describe, expect, it } from 'vitest';
import { FakeSessionManager } from '../test/fake-session-manager.js';
import { ModeChangeLogTag, ModeChangeTool } from './index.js';

const context = testContext({ sessionId: 'session-1', conversationId: 'conversation-1', org: 'acme', user: 'ada' });
const call = JSON.stringify({ mode: 'ddr_authoring', branch: false, reason: 'The user wants a DDR.' });

function setup(sessionManager: FakeSessionManager = new FakeSessionManager()) {
  const logger = new CapturingAdminLogger();
  return { logger, sessionManager, tool: new ModeChangeTool({ logger, sessionManager }) };
}

/** A session manager whose every mode change answers `result`. */
class AnsweringSessionManager extends FakeSessionManager {
  constructor(private readonly result: SetSessionModeResult) {
    super();
  }
  override async setSessionMode(
    ...[sessionId, mode, reason, org, user, options]: Parameters<FakeSessionManager['setSessionMode']>
  ): Promise<SetSessionModeResult> {
    this.calls.push([sessionId, mode, reason, org, user, options]);
    return this.result;
  }
}

describe('agent_change_mode: honest outcomes', () => {
  it('reports a change saved after the abort as saved, not cancelled (the store took 300 ms, the call was cancelled at 20 ms)', async () => {
    const { tool, sessionManager } = setup(new FakeSessionManager().slowBy(300));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const result = await tool.execute(call, context, controller.signal);
    expect(controller.signal.aborted).toBe(true);
    expect((await sessionManager.getSession('session-1'))?.mode).toBe('ddr_authoring');
    expect(result.successful).toBe(true);
    expect(JSON.parse(result.result as string)).toMatchObject({ success: true, mode: 'ddr_authoring' });
    expect(result.result).not.toContain('wasCancelled');
  });

  it("passes its signal to the session store, and reports the store's CANCELLED as a cancelled call (AGN-005 §8)", async () => {
    const { tool, sessionManager } = setup(
      new AnsweringSessionManager({ applied: false, code: 'CANCELLED', message: 'cancelled before it was saved' }),
    );
    const controller = new AbortController();
    const result = await tool.execute(call, context, controller.signal);
    expect(sessionManager.calls[0]![5]?.signal).toBe(controller.signal);
    expect(result.successful).toBe(true);
    expect(JSON.parse(result.result as string)).toEqual({
      wasCancelled: true,
      message: 'The mode change was cancelled before it was applied; the session mode is unchanged.',
      sessionId: 'session-1',
      conversationId: 'conversation-1',
    });
  });

  it('reports OUTCOME_UNKNOWN as a failure of its own that claims neither outcome, and logs it', async () => {
    const message =
      'The connection broke while the change was being committed; it may or may not have been saved. Check GET /v1/sessions/session-1.';
    const { tool, logger } = setup(
      new AnsweringSessionManager({ applied: 'unknown', code: 'OUTCOME_UNKNOWN', message }),
    );
    const result = await tool.execute(call, context);
    expect(result.successful).toBe(false);
    expect(result.errors).toEqual([{ code: 'OUTCOME_UNKNOWN', message }]);
    expect(logger.entries.map((entry) => entry.tag)).toContain(ModeChangeLogTag.OUTCOME_UNKNOWN);
  });

  it.each([
    ['VALUE_TOO_LONG', 'reason is 900000 characters long; the limit is 1000.', 'reason is 900000 characters long'],
    ['TIMEOUT', 'PostgreSQL schema "secret_schema" did not answer within queryTimeoutMs', 'did not answer in time'],
    ['DATABASE_LOCKED', 'The SQLite database /srv/private/aptix.db is locked', 'locked by another process'],
    ['UNAVAILABLE', 'Cannot connect to postgres://10.0.0.7', 'cannot be reached'],
  ])(
    "turns the store's %s into a failure that says the mode was not changed, without the store's details",
    async (code, storeMessage, expected) => {
      const { tool, logger } = setup(
        new FakeSessionManager().failWith(new SessionStoreError(code as 'TIMEOUT', storeMessage)),
      );
      const result = await tool.execute(call, context);
      expect(result.successful).toBe(false);
      expect(result.errors[0]!.code).toBe(code);
      const text = InvokeResult.errorMessage(result);
      expect(text).toContain(expected);
      expect(text).toContain('mode was not changed');
      for (const secret of ['secret_schema', '/srv/private', '10.0.0.7']) expect(text).not.toContain(secret);
      expect(logger.entries.find((entry) => entry.tag === ModeChangeLogTag.REFUSED)?.message).toBe(storeMessage);
    },
  );
});
