import {
  AgentToolExecutor,
  AgentToolRegistry,
  canonicalJson,
  ExecutionErrorCode,
  InvokeResult,
  type AgentToolExecutionContext,
} from '@aptix/tool-contract';
import { CapturingAdminLogger, ContractCheckCode, testContext, verifyToolContract } from '@aptix/tool-contract/testing';
import { describe, expect, it } from 'vitest';
import { sampleModes } from '../test/modes.fixture.js';
import {
  ListModesErrorCode,
  ListModesTool,
  ModeCatalog,
  tools,
  type AgentModeCatalogService,
  type AgentModeSummary,
  type ListModesResult,
} from './index.js';

/** A catalog service double that records its calls and answers as told. */
class FakeCatalog implements AgentModeCatalogService {
  calls = 0;
  constructor(private readonly answer: () => Promise<readonly AgentModeSummary[]>) {}
  getAllModes(): Promise<readonly AgentModeSummary[]> {
    this.calls++;
    return this.answer();
  }
}

function setup(answer: () => Promise<readonly AgentModeSummary[]> = async () => sampleModes()) {
  const logger = new CapturingAdminLogger();
  const modeCatalog = new FakeCatalog(answer);
  return { logger, modeCatalog, tool: new ListModesTool({ logger, modeCatalog }) };
}

function parsed(result: InvokeResult<string>): ListModesResult {
  expect(result.successful).toBe(true);
  return JSON.parse(result.result as string) as ListModesResult;
}

describe('agent_list_modes: the four tests of TUL-010 §6', () => {
  it('1. registers with the registry without an exception', () => {
    const logger = new CapturingAdminLogger();
    const registry = new AgentToolRegistry({ logger });
    expect(() => registry.registerTool(ListModesTool)).not.toThrow();
    const registered = registry.get('agent_list_modes')!;
    expect(registered.usageMetadata).toMatch(/^agent_list_modes — Usage Guide/);
    expect(registered.annotations).toEqual({ readOnlyHint: true, idempotentHint: true });
    expect(registry.definitions('mcp')[0]).toMatchObject({ annotations: { readOnlyHint: true, idempotentHint: true } });
    expect(logger.entries).toEqual([]);
  });

  it('2. lists the catalog modes for empty arguments, with the required fields populated', async () => {
    const { tool } = setup();
    for (const args of ['{}', '', '  ']) {
      const { modes } = parsed(await tool.execute(args, testContext()));
      expect(modes.length).toBeGreaterThan(0);
      const [first] = modes;
      expect(first).toMatchObject({
        id: '11111111111111111111111111111111',
        key: 'general',
        displayName: 'General',
        description: 'Everyday help.',
        isDefault: true,
      });
      expect(first!.systemPromptSummary).toBe('Be helpful.');
      expect(first!.humanRoleHints).toEqual(['Any user']);
      expect(first!.tools).toEqual(['agent_hello_world']);
      expect(first).not.toHaveProperty('exampleUtterances');
    }
  });

  it('3. includes the example utterances when includeExamples is true', async () => {
    const { tool } = setup();
    const { modes } = parsed(await tool.execute('{"includeExamples": true}', testContext()));
    expect(modes.map((mode) => mode.exampleUtterances)).toEqual([
      ['Say hello to me.'],
      ['Help me write a DDR.', 'Review this record.'],
    ]);
    const { modes: without } = parsed(await tool.execute('{"includeExamples": false}', testContext()));
    expect(without.every((mode) => !('exampleUtterances' in mode))).toBe(true);
  });

  it('4. a catalog that throws gives a logged, failed result with a message and no payload', async () => {
    const { tool, logger } = setup(async () => {
      throw new Error('connection refused: postgres://secret@db');
    });
    const result = await tool.execute('{}', testContext({ sessionId: 's-9' }));
    expect(result.successful).toBe(false);
    expect(result.result).toBeNull();
    expect(InvokeResult.errorMessage(result)).toMatch(/^agent_list_modes could not read the mode catalog/);
    expect(InvokeResult.errorMessage(result)).not.toContain('secret');
    expect(result.errors[0]!.code).toBe(ListModesErrorCode.CATALOG_UNAVAILABLE);
    expect(() => JSON.stringify(result)).not.toThrow();
    const [logged] = logger.exceptions();
    // AGN-005 §6.1: the standard tag, so a log filter finds it.
    expect(logged).toMatchObject({
      tag: '[agent_list_modes_ExecuteAsync__Exception]',
      message: 'connection refused: postgres://secret@db',
    });
    expect(logged!.pairs).toContainEqual(['SessionId', 's-9']);
  });
});

describe('agent_list_modes: the rest of TUL-011 §5 and TUL-010 §3–§4', () => {
  it('names every error code it can return in its usage guide, and the cancelled shape (AGN-005 §7.2.1)', async () => {
    for (const code of ['CATALOG_UNAVAILABLE', 'INVALID_ARGUMENTS', 'TOOL_EXCEPTION', 'TIMEOUT'])
      expect(ListModesTool.ToolUsageMetadata).toMatch(new RegExp(`^- ${code}: `, 'm'));
    expect(ListModesTool.ToolUsageMetadata).toContain('"wasCancelled": true');
    const report = await verifyToolContract(ListModesTool, { garbage: false, cancellation: false });
    expect(
      report.warnings.filter((finding) => finding.code === ContractCheckCode.USAGE_ERROR_CODE_UNDOCUMENTED),
    ).toEqual([]);
  });

  it('a catalog that returns null is logged and gives a failed result without payload', async () => {
    const { tool, logger } = setup(async () => null as unknown as readonly AgentModeSummary[]);
    const result = await tool.execute('{}', testContext());
    expect(result).toMatchObject({ successful: false, result: null, errors: [{ code: 'CATALOG_UNAVAILABLE' }] });
    expect(logger.errors()).toEqual([
      expect.objectContaining({
        tag: '[agent_list_modes_ExecuteAsync__Exception]',
        message: expect.stringContaining('returned null'),
      }),
    ]);
  });

  it.each([
    ['{"includeExamples": "yes"}', '\'includeExamples\' must be boolean, got string "yes"'],
    ['{"includeExamples": 1}', "'includeExamples' must be boolean, got number 1"],
    ['{"filter": "ddr"}', "'filter' is not an argument of this tool (its arguments: includeExamples)"],
    ['[true]', 'must be a JSON object, got an array of 1'],
    ['{"includeExamples": tru', 'the arguments are not valid JSON'],
  ])('refuses %s without reading the catalog', async (args, expected) => {
    const { tool, modeCatalog } = setup();
    const result = await tool.execute(args, testContext());
    expect(result).toMatchObject({
      successful: false,
      result: null,
      errors: [{ code: ExecutionErrorCode.INVALID_ARGUMENTS }],
    });
    expect(InvokeResult.errorMessage(result)).toContain('Invalid arguments for agent_list_modes: ');
    expect(InvokeResult.errorMessage(result)).toContain(expected);
    expect(modeCatalog.calls).toBe(0);
  });

  it('is idempotent and read-only: the same catalog gives the same answer and stays unchanged', async () => {
    const catalog = ModeCatalog.fromModes(sampleModes());
    const tool = new ListModesTool({ logger: new CapturingAdminLogger(), modeCatalog: catalog });
    const before = JSON.stringify(catalog.modes);
    const first = await tool.execute('{"includeExamples":true}', testContext());
    const second = await tool.execute('{"includeExamples":true}', testContext({ sessionId: 'another' }));
    expect(second.result).toBe(first.result);
    expect(JSON.stringify(catalog.modes)).toBe(before);
  });

  it('answers with an array for role hints and examples a catalog service left out or set to null', async () => {
    const { tool } = setup(async () => [
      { ...sampleModes()[0]!, humanRoleHints: undefined, exampleUtterances: null as unknown as string[] },
    ]);
    const { modes } = parsed(await tool.execute('{"includeExamples":true}', testContext()));
    expect(modes[0]).toMatchObject({ humanRoleHints: [], exampleUtterances: [] });
  });

  it('describes a call the caller cancelled as a successful result (AGN-005 §8)', async () => {
    const tool = new ListModesTool({
      logger: new CapturingAdminLogger(),
      modeCatalog: ModeCatalog.fromModes(sampleModes()),
    });
    const controller = new AbortController();
    controller.abort();
    const result = await tool.execute(
      '{}',
      testContext({ sessionId: 's-1', conversationId: 'c-1' }),
      controller.signal,
    );
    expect(JSON.parse(result.result as string)).toEqual({
      wasCancelled: true,
      message: expect.any(String),
      sessionId: 's-1',
      conversationId: 'c-1',
    });
  });

  it('works through the executor, which hands the catalog in as a dependency and maps strict-mode nulls to "absent"', async () => {
    const logger = new CapturingAdminLogger();
    const registry = new AgentToolRegistry({ logger });
    registry.registerTools(tools);
    const modeCatalog = ModeCatalog.fromModes(sampleModes());
    const executor = new AgentToolExecutor({
      registry,
      logger,
      createTool: (toolClass) => new toolClass({ logger, modeCatalog }),
    });
    const context: AgentToolExecutionContext = testContext();
    const { modes } = parsed(await executor.execute('agent_list_modes', '{"includeExamples":null}', context));
    expect(modes.map((mode) => mode.key)).toEqual(['general', 'ddr_authoring']);
    const invalid = await executor.execute('agent_list_modes', { includeExamples: 'no' }, context);
    expect(invalid.errors[0]!.code).toBe(ExecutionErrorCode.INVALID_ARGUMENTS);
  });

  it('refuses to be built without its dependencies', () => {
    const logger = new CapturingAdminLogger();
    expect(() => new ListModesTool({ logger } as never)).toThrow(
      new TypeError('ListModesTool requires a modeCatalog: an AgentModeCatalogService with getAllModes().'),
    );
    expect(() => new ListModesTool({ logger, modeCatalog: {} } as never)).toThrow(TypeError);
    expect(() => new ListModesTool({ modeCatalog: new FakeCatalog(async () => []) } as never)).toThrow(
      new TypeError('ListModesTool requires a logger.'),
    );
    expect(() => new ListModesTool(undefined as never)).toThrow(TypeError);
  });

  it('keeps its schema: a change to it must be deliberate', async () => {
    const schema = ListModesTool.getSchema();
    expect(schema.parameters.required).toEqual([]);
    expect(schema.parameters.properties.includeExamples).toMatchObject({ type: 'boolean' });
    await expect(`${JSON.stringify(JSON.parse(canonicalJson(schema)), null, 2)}\n`).toMatchFileSnapshot(
      '../test/__snapshots__/agent_list_modes.schema.json',
    );
  });

  it('gives usage guidance with every section of AGN-005 §7.2.2 and the guidance of TUL-010 §5', () => {
    const text = ListModesTool.ToolUsageMetadata;
    for (const heading of ['Primary purpose:', 'Rules:', 'Arguments:', 'Error codes:', 'Good usage:', 'Bad usage:'])
      expect(text).toContain(heading);
    expect(text).toContain('Do not call it on every user message');
    expect(text).toContain('not a substitute for agent_change_mode');
    expect(text).toContain('CATALOG_UNAVAILABLE');
  });
});
