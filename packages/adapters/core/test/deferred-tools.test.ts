import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openScratchSessions, type ScratchSessions } from '../src/testing/index.js';
import { AdapterSetupError, createAptixTools } from '../src/index.js';

const TOOLS = [samples, modeCatalogPackage, modeChangePackage];

describe('createAptixTools with deferred', () => {
  let sessions: ScratchSessions;
  beforeAll(async () => void (sessions = await openScratchSessions()));
  afterAll(() => sessions.close());

  it('refuses mode keys the catalog lacks, and mode keys without a session, at creation', async () => {
    const session = await sessions.newSession('general');
    await expect(createAptixTools({ tools: TOOLS, session, deferred: ['general', 'genral'] })).rejects.toThrow(
      /deferred names mode\(s\) "genral", which mode catalog .* does not have/,
    );
    await expect(createAptixTools({ tools: [samples], deferred: ['general'] })).rejects.toBeInstanceOf(
      AdapterSetupError,
    );
  });

  it('without a session, deferred: true hands a framework the two meta tools, which search and call every tool', async () => {
    const aptix = await createAptixTools({ tools: [samples], deferred: true });
    expect(aptix.names()).toEqual(['aptix_find_tools', 'aptix_call_tool']);
    expect(aptix.describe('aptix_find_tools', true)).toMatchObject({
      strict: true,
      parameters: { required: ['query', 'sessionId', 'limit'] },
    });
    expect(aptix.describe('aptix_call_tool', true)).toMatchObject({
      strict: false,
      parameters: { required: ['name'] },
    });

    const found = await aptix.call('aptix_find_tools', '{"query":"refund an order"}');
    expect(found.successful && JSON.parse(found.result)).toMatchObject({
      mode: 'all',
      sessionId: null,
      total: samples.tools.length,
      tools: [{ name: 'testing_issue_refund' }],
    });
    expect(
      await aptix.call('aptix_call_tool', { name: 'testing_calculator', arguments: '{"operation":"add","a":1,"b":2}' }),
    ).toMatchObject({ successful: true, result: expect.stringContaining('"value":3') });
    expect(
      await aptix.call('aptix_call_tool', { name: 'testing_calculator', arguments: {}, sessionId: 's-1' }),
    ).toMatchObject({
      successful: false,
      errors: [{ code: 'SESSION_MISMATCH', message: expect.stringContaining('this agent works without a session') }],
    });
    expect(await aptix.call('aptix_call_tool', { name: 'aptix_find_tools' })).toMatchObject({
      successful: false,
      errors: [{ code: 'INVALID_ARGUMENTS', message: expect.stringContaining("'name'") }],
    });
    expect(
      await aptix.approvalFor('aptix_call_tool', {
        name: 'testing_issue_refund',
        arguments: { orderId: 'A-1', amount: 500, currency: 'EUR' },
      }),
    ).toMatchObject({ required: true });
    expect(
      await aptix.call('aptix_call_tool', {
        name: 'testing_issue_refund',
        arguments: { orderId: 'A-1', amount: 500, currency: 'EUR' },
      }),
    ).toMatchObject({
      successful: false,
      errors: [{ code: 'APPROVAL_REQUIRED' }],
    });
  });

  it('keeps listing a mode it does not defer, and refuses the meta tools there', async () => {
    const session = await sessions.newSession('general');
    const aptix = await createAptixTools({ tools: TOOLS, session, deferred: ['tool_diagnostics'] });
    expect(await aptix.offeredToolNames()).toEqual([
      'agent_hello_world',
      'testing_calculator',
      'agent_list_modes',
      'agent_change_mode',
    ]);
    expect(await aptix.guidance()).toMatch(/^# Tool guidance/);
    expect(await aptix.call('aptix_find_tools', {})).toMatchObject({
      successful: false,
      errors: [
        { code: 'TOOL_NOT_IN_MODE', message: expect.stringContaining("this mode's tools are listed to you directly") },
      ],
    });
  });
});
