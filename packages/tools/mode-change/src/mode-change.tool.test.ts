import {
  AgentToolExecutor,
  AgentToolRegistry,
  canonicalJson,
  ExecutionErrorCode,
  InvokeResult,
  type AgentToolExecutionContext,
} from '@aptix/tool-contract';
import { CapturingAdminLogger, testContext } from '@aptix/tool-contract/testing';
import { describe, expect, it } from 'vitest';
import { FakeSessionManager } from '../test/fake-session-manager.js';
import { ModeChangeLogTag, ModeChangeMessage, ModeChangeTool, tools, type ModeChangeResult } from './index.js';

const context = testContext({ sessionId: 'session-1', conversationId: 'conversation-1', org: 'acme', user: 'ada' });

function setup(sessionManager = new FakeSessionManager()) {
  const logger = new CapturingAdminLogger();
  return { logger, sessionManager, tool: new ModeChangeTool({ logger, sessionManager }) };
}

function args(value: Record<string, unknown>): string {
  return JSON.stringify(value);
}

const valid = { mode: 'ddr_authoring', branch: false, reason: 'The user wants to write a design decision record.' };

function expectFailure(result: InvokeResult<string>, message: string): void {
  expect(result.successful).toBe(false);
  expect(result.result).toBeNull();
  expect(InvokeResult.errorMessage(result)).toBe(message);
}

describe('agent_change_mode: the four tests of TUL-007 §6', () => {
  it.each([false, true])(
    '1. happy path (branch=%s): calls setSessionMode once with the expected arguments and echoes them',
    async (branch) => {
      const { tool, sessionManager } = setup();
      const result = await tool.execute(args({ ...valid, branch }), context);
      expect(sessionManager.calls).toEqual([
        ['session-1', 'ddr_authoring', valid.reason, 'acme', 'ada', { branch, signal: expect.any(AbortSignal) }],
      ]);
      expect(result.successful).toBe(true);
      const payload = JSON.parse(result.result as string) as ModeChangeResult;
      expect(payload).toEqual({
        success: true,
        mode: 'ddr_authoring',
        branch,
        reason: valid.reason,
        sessionId: 'session-1',
        conversationId: 'conversation-1',
      });
      expect((await sessionManager.getSession('session-1'))?.mode).toBe('ddr_authoring');
    },
  );

  it.each([
    ['missing', { branch: false, reason: 'r' }],
    ['empty', { mode: '', branch: false, reason: 'r' }],
    ['blank', { mode: '   ', branch: false, reason: 'r' }],
    ['null', { mode: null, branch: false, reason: 'r' }],
    ['not a string', { mode: 42, branch: false, reason: 'r' }],
  ])('2. mode %s: a failed result about the mode, and setSessionMode is not called', async (_case, value) => {
    const { tool, sessionManager } = setup();
    const result = await tool.execute(args(value), context);
    expectFailure(result, "ModeChangeTool requires a non-empty 'mode' string.");
    expect(result.errors[0]!.code).toBe(ExecutionErrorCode.INVALID_ARGUMENTS);
    expect(sessionManager.calls).toEqual([]);
  });

  it.each([
    ['missing', { mode: 'general', branch: true }],
    ['empty', { mode: 'general', branch: true, reason: '' }],
    ['blank', { mode: 'general', branch: true, reason: ' \n ' }],
    ['null', { mode: 'general', branch: true, reason: null }],
  ])('3. reason %s: a failed result about the reason, and setSessionMode is not called', async (_case, value) => {
    const { tool, sessionManager } = setup();
    expectFailure(
      await tool.execute(args(value), context),
      "ModeChangeTool requires a non-empty 'reason' string explaining why the mode change is needed.",
    );
    expect(sessionManager.calls).toEqual([]);
  });

  it('4. an exception from the session manager is logged with a stable tag and the mode change is reported as failed', async () => {
    const { tool, logger, sessionManager } = setup(
      new FakeSessionManager().failWith(new Error('database is locked at /var/lib/aptix.db')),
    );
    const result = await tool.execute(args(valid), context);
    expectFailure(result, 'ModeChangeTool failed to change the session mode.');
    expect(result.errors[0]!.code).toBe(ExecutionErrorCode.TOOL_EXCEPTION);
    expect(sessionManager.calls).toHaveLength(1);
    const [logged] = logger.exceptions();
    expect(logged).toMatchObject({
      tag: ModeChangeLogTag.EXCEPTION,
      message: 'database is locked at /var/lib/aptix.db',
    });
    expect(logged!.tag).toBe('[agent_change_mode_ExecuteAsync__Exception]');
    expect(logged!.pairs).toContainEqual(['SessionId', 'session-1']);
  });
});

describe('agent_change_mode: the validation order and messages of TUL-007 §3.4', () => {
  it.each([null, undefined, '', '   \n'])('refuses arguments %j before anything else', async (input) => {
    const { tool, sessionManager } = setup();
    expectFailure(await tool.execute(input as string, null as never), ModeChangeMessage.ARGUMENTS_REQUIRED);
    expect(sessionManager.calls).toEqual([]);
  });

  it('refuses a missing context next', async () => {
    const { tool, sessionManager } = setup();
    expectFailure(await tool.execute(args(valid), null as never), 'ModeChangeTool requires a valid execution context.');
    expectFailure(
      await tool.execute(args(valid), undefined as never),
      'ModeChangeTool requires a valid execution context.',
    );
    expect(sessionManager.calls).toEqual([]);
  });

  it.each([undefined, '', '  '])(
    'refuses a context without a session id (%j), logging an error, before looking at the fields',
    async (sessionId) => {
      const { tool, sessionManager, logger } = setup();
      const result = await tool.execute(args({ mode: '' }), { ...context, sessionId: sessionId as string });
      expectFailure(result, 'ModeChangeTool cannot change mode because the session id is missing.');
      expect(logger.errors()).toEqual([
        expect.objectContaining({
          tag: ModeChangeLogTag.MISSING_SESSION_ID,
          message: expect.stringContaining('without a session id'),
        }),
      ]);
      expect(sessionManager.calls).toEqual([]);
    },
  );

  it('checks mode, then branch, then reason', async () => {
    const { tool, sessionManager } = setup();
    expectFailure(await tool.execute('{}', context), ModeChangeMessage.MODE_REQUIRED);
    expectFailure(await tool.execute(args({ reason: '' }), context), ModeChangeMessage.MODE_REQUIRED);
    expectFailure(
      await tool.execute(args({ mode: 'general' }), context),
      "ModeChangeTool requires a 'branch' boolean flag.",
    );
    expectFailure(
      await tool.execute(args({ mode: 'general', branch: false }), context),
      ModeChangeMessage.REASON_REQUIRED,
    );
    expect(sessionManager.calls).toEqual([]);
  });

  it.each([
    ['null', null],
    ['a string', 'true'],
    ['a number', 0],
  ])('refuses a branch that is %s', async (_case, branch) => {
    const { tool, sessionManager } = setup();
    expectFailure(await tool.execute(args({ ...valid, branch }), context), ModeChangeMessage.BRANCH_REQUIRED);
    expect(sessionManager.calls).toEqual([]);
  });

  it.each(['sessionId', 'org', 'user'])('refuses %s in the arguments: it comes from the context only', async (name) => {
    const { tool, sessionManager } = setup();
    const result = await tool.execute(args({ ...valid, [name]: 'someone-else' }), context);
    expectFailure(
      result,
      `Invalid arguments for agent_change_mode: '${name}' is not an argument of this tool (its arguments: mode, branch, reason).`,
    );
    expect(sessionManager.calls).toEqual([]);
  });

  it('refuses malformed JSON and a JSON value that is not an object', async () => {
    const { tool, sessionManager } = setup();
    const malformed = await tool.execute('{"mode": "general", ', context);
    expect(InvokeResult.errorMessage(malformed)).toMatch(
      /^Invalid arguments for agent_change_mode: the arguments are not valid JSON/,
    );
    expectFailure(await tool.execute('["general", false, "why"]', context), ModeChangeMessage.ARGUMENTS_REQUIRED);
    expectFailure(await tool.execute('"general"', context), ModeChangeMessage.ARGUMENTS_REQUIRED);
    expect(sessionManager.calls).toEqual([]);
  });
});

describe('agent_change_mode: what the session manager answers', () => {
  it("passes a refusal on to the model with the manager's message and code, not the generic failure", async () => {
    const { tool, sessionManager, logger } = setup();
    const result = await tool.execute(args({ ...valid, mode: 'ddr-authoring' }), context);
    expectFailure(result, 'Unknown mode "ddr-authoring". Valid modes: general, ddr_authoring, tool_diagnostics.');
    expect(result.errors[0]!.code).toBe('UNKNOWN_MODE');
    expect((await sessionManager.getSession('session-1'))?.mode).toBe('general');
    expect(logger.exceptions()).toEqual([]);
    expect(logger.events()).toEqual([expect.objectContaining({ tag: ModeChangeLogTag.REFUSED, level: 'info' })]);
  });

  it('passes on an unknown session the same way', async () => {
    const { tool } = setup();
    const result = await tool.execute(args(valid), { ...context, sessionId: 'session-404' });
    expect(result.errors).toEqual([
      { code: 'SESSION_NOT_FOUND', message: 'Session "session-404" does not exist; the mode was not changed.' },
    ]);
  });

  it('treats a malformed answer from the manager as a failure to change the mode', async () => {
    const sessionManager = new FakeSessionManager();
    sessionManager.setSessionMode = async () => undefined as never;
    const { tool, logger } = setup(sessionManager);
    expectFailure(await tool.execute(args(valid), context), ModeChangeMessage.FAILED);
    expect(logger.exceptions()).toHaveLength(1);
  });

  it('reports the mode the manager wrote', async () => {
    const sessionManager = new FakeSessionManager();
    const real = sessionManager.setSessionMode.bind(sessionManager);
    sessionManager.setSessionMode = (id, mode, ...rest) => real(id, mode.toLowerCase(), ...rest);
    const { tool } = setup(sessionManager);
    const result = await tool.execute(args({ ...valid, mode: 'DDR_AUTHORING' }), context);
    expect(JSON.parse(result.result as string)).toMatchObject({ success: true, mode: 'ddr_authoring' });
  });

  it('does not change the mode when the caller has already cancelled, and says so (AGN-005 §8)', async () => {
    const { tool, sessionManager } = setup();
    const controller = new AbortController();
    controller.abort();
    const result = await tool.execute(args(valid), context, controller.signal);
    expect(result.successful).toBe(true);
    expect(JSON.parse(result.result as string)).toMatchObject({
      wasCancelled: true,
      sessionId: 'session-1',
      conversationId: 'conversation-1',
    });
    expect(sessionManager.calls).toEqual([]);
  });
});

describe('agent_change_mode: contract and registration (TUL-011 §5)', () => {
  it('registers with the registry without an exception', () => {
    const logger = new CapturingAdminLogger();
    const registry = new AgentToolRegistry({ logger });
    expect(() => registry.registerTools(tools)).not.toThrow();
    expect(registry.names()).toEqual(['agent_change_mode']);
    expect(registry.get('agent_change_mode')!.strict).toBe(true);
    expect(logger.entries).toEqual([]);
  });

  it('runs through the executor with its dependencies injected, arguments as text or as an object', async () => {
    const logger = new CapturingAdminLogger();
    const sessionManager = new FakeSessionManager();
    const registry = new AgentToolRegistry({ logger });
    registry.registerTools(tools);
    const executor = new AgentToolExecutor({
      registry,
      logger,
      createTool: (toolClass) => new toolClass({ logger, sessionManager }),
    });
    const ctx: AgentToolExecutionContext = { sessionId: 'session-1', conversationId: 'c', org: 'acme', user: 'ada' };
    expect((await executor.execute('agent_change_mode', args(valid), ctx)).successful).toBe(true);
    expect(
      (await executor.execute('agent_change_mode', { ...valid, mode: 'general', branch: true }, ctx)).successful,
    ).toBe(true);
    // The executor's calls take the same validation path.
    expect(
      InvokeResult.errorMessage(await executor.execute('agent_change_mode', { mode: 'general', branch: true }, ctx)),
    ).toBe(ModeChangeMessage.REASON_REQUIRED);
    expect(InvokeResult.errorMessage(await executor.execute('agent_change_mode', valid, {}))).toBe(
      ModeChangeMessage.SESSION_ID_MISSING,
    );
    expect(sessionManager.calls.map((call) => [call[1], call[5]])).toEqual([
      ['ddr_authoring', { branch: false, signal: expect.any(AbortSignal) }],
      ['general', { branch: true, signal: expect.any(AbortSignal) }],
    ]);
    expect((await sessionManager.getSession('session-1'))?.history.map((change) => change.toMode)).toEqual([
      'ddr_authoring',
      'general',
    ]);
  });

  it('refuses to be built without a session manager or a logger', () => {
    const logger = new CapturingAdminLogger();
    expect(() => new ModeChangeTool({ logger } as never)).toThrow(
      new TypeError('ModeChangeTool requires a sessionManager: an AgentSessionManager with setSessionMode().'),
    );
    expect(() => new ModeChangeTool({ logger, sessionManager: null } as never)).toThrow(TypeError);
    expect(() => new ModeChangeTool({ sessionManager: new FakeSessionManager() } as never)).toThrow(
      new TypeError('ModeChangeTool requires a logger.'),
    );
    expect(() => new ModeChangeTool(null as never)).toThrow(TypeError);
  });

  it('carries the description of TUL-007 §5.3 and requires exactly mode, branch and reason', () => {
    const schema = ModeChangeTool.getSchema();
    expect(schema.description).toBe(
      'Changes the mode for the current agent session to the specified mode string. Call only ' +
        "after the user confirms a mode change, and provide a short 'reason' describing why this " +
        'mode fits the current request. Set branch=true when the user wants the new work to start ' +
        'as a separate session.',
    );
    expect(schema.parameters.required).toEqual(['mode', 'branch', 'reason']);
    expect(Object.keys(schema.parameters.properties)).toEqual(['mode', 'branch', 'reason']);
    expect(schema.parameters.additionalProperties).toBe(false);
  });

  it('keeps its schema: a change to it must be deliberate', async () => {
    await expect(
      `${JSON.stringify(JSON.parse(canonicalJson(ModeChangeTool.getSchema())), null, 2)}\n`,
    ).toMatchFileSnapshot('../test/__snapshots__/agent_change_mode.schema.json');
  });

  it('carries the guidance of TUL-007 §5.2 in every section of AGN-005 §7.2.2', () => {
    const text = ModeChangeTool.ToolUsageMetadata.replace(/\s+/g, ' ');
    for (const heading of ['Primary purpose:', 'Rules:', 'Arguments:', 'Error codes:', 'Good usage:', 'Bad usage:'])
      expect(text).toContain(heading);
    expect(text).toContain(
      'Use this tool to change the current agent session mode, but only after the user has explicitly agreed to switch.',
    );
    expect(text).toContain(
      'First, propose a specific target mode and ask whether the user wants to (1) stay in the current mode, (2) switch this session to that mode, or (3) switch and start a new session.',
    );
    expect(text).toContain(
      'use branch=false for switching the current session, and branch=true when the user wants to switch and start a new session.',
    );
    expect(text).toContain('UNKNOWN_MODE');
  });

  it('keeps its messages exactly as TUL-007 spells them', () => {
    expect(ModeChangeMessage).toEqual({
      ARGUMENTS_REQUIRED: 'ModeChangeTool requires a non-empty arguments object.',
      CONTEXT_REQUIRED: 'ModeChangeTool requires a valid execution context.',
      SESSION_ID_MISSING: 'ModeChangeTool cannot change mode because the session id is missing.',
      MODE_REQUIRED: "ModeChangeTool requires a non-empty 'mode' string.",
      BRANCH_REQUIRED: "ModeChangeTool requires a 'branch' boolean flag.",
      REASON_REQUIRED: "ModeChangeTool requires a non-empty 'reason' string explaining why the mode change is needed.",
      FAILED: 'ModeChangeTool failed to change the session mode.',
    });
  });
});
