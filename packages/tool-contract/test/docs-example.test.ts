// The tool docs/tool-packages.md shows first, in the short form, is held to about 20 lines, and is the
// code that runs: test/docs/*.ts are the guide's two blocks byte for byte (the short form, and the same
// tool as a class), so the compiler checks them under `typecheck` and these tests call them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  AgentToolExecutor,
  AgentToolRegistry,
  canonicalJson,
  CapturingAdminLogger,
  inspectToolClass,
  type AnyAgentToolClass,
} from '../src/index.js';
import { schemaSnapshotText, testContext, verifyToolContract } from '../src/testing/index.js';
import { ConvertTemperatureTool as ClassForm } from './docs/convert-temperature.class.js';
import { ConvertTemperatureTool as ShortForm } from './docs/convert-temperature.tool.js';

/** The most lines the short form may take, imports and blank lines included (the class form takes 63). */
const MAX_LINES = 24;

const guide = readFileSync(new URL('../../../docs/tool-packages.md', import.meta.url), 'utf8');
const fixture = (name: string) => readFileSync(new URL(`./docs/${name}`, import.meta.url), 'utf8');
/** Every fenced TypeScript block of the guide, with its info string. */
const tsBlocks = [...guide.matchAll(/^```ts([^\n]*)\n([\s\S]*?)^```$/gm)].map((match) => ({
  info: match[1]!.trim(),
  body: match[2]!,
}));

describe('docs/tool-packages.md: a tool in about 20 lines', () => {
  it('shows the short form first, as the file the guide writes, and it is test/docs/convert-temperature.tool.ts', () => {
    expect(tsBlocks[0]?.info).toBe('file=src/convert-temperature.tool.ts');
    expect(tsBlocks[0]?.body).toBe(fixture('convert-temperature.tool.ts'));
    expect(tsBlocks[0]?.body).toContain('defineTool({');
  });

  it(`takes at most ${MAX_LINES} lines`, () => {
    const lines = tsBlocks[0]!.body.trimEnd().split('\n');
    expect(lines.length, lines.join('\n')).toBeLessThanOrEqual(MAX_LINES);
  });

  it('shows the same tool as a class after it, and that is test/docs/convert-temperature.class.ts', () => {
    const after = guide.slice(guide.indexOf('### The same tool as a class'));
    const block = [...after.matchAll(/^```ts([^\n]*)\n([\s\S]*?)^```$/gm)][0];
    expect(block?.[2]).toBe(fixture('convert-temperature.class.ts'));
    expect(block?.[2]).toContain('extends TypedAgentTool');
  });
});

describe('the short form is the class form', () => {
  const executorFor = (toolClass: AnyAgentToolClass) => {
    const registry = new AgentToolRegistry();
    registry.registerTool(toolClass);
    return new AgentToolExecutor({ registry, logger: new CapturingAdminLogger() });
  };

  it('has the same name, schema, modes and usage guide, to the character', () => {
    expect(ShortForm.ToolName).toBe(ClassForm.ToolName);
    expect(ShortForm.Modes).toEqual(ClassForm.Modes);
    expect(ShortForm.ToolUsageMetadata).toBe(ClassForm.ToolUsageMetadata);
    expect(canonicalJson(ShortForm.getSchema())).toBe(canonicalJson(ClassForm.getSchema()));
    expect(inspectToolClass(ShortForm).tool?.strict).toBe(true);
  });

  it('writes the same schema snapshot (tool-schemas.json)', () => {
    const snapshot = (toolClass: AnyAgentToolClass) =>
      schemaSnapshotText({ [toolClass.ToolName]: inspectToolClass(toolClass).tool!.canonicalSchema });
    expect(snapshot(ShortForm)).toBe(snapshot(ClassForm));
    expect(Object.keys(JSON.parse(snapshot(ShortForm)).acme_convert_temperature.parameters.properties)).toEqual([
      'from',
      'precision',
      'to',
      'value',
    ]);
  });

  it('answers every call as the class form does, through the real AgentToolExecutor', async () => {
    const calls: Array<[unknown, object]> = [
      [
        { value: 100, from: 'celsius', to: 'fahrenheit' },
        { value: 212, unit: 'fahrenheit', sessionId: null, conversationId: null },
      ],
      [
        { value: 20, from: 'celsius', to: 'kelvin', precision: 1 },
        { value: 293.2, unit: 'kelvin', sessionId: null, conversationId: null },
      ],
      [
        { value: 0, from: 'celsius', to: 'fahrenheit', precision: null },
        { value: 32, unit: 'fahrenheit', sessionId: null, conversationId: null },
      ],
      [
        { value: -40, from: 'fahrenheit', to: 'celsius', precision: 0 },
        { value: -40, unit: 'celsius', sessionId: null, conversationId: null },
      ],
    ];
    for (const [args, expected] of calls) {
      const result = await executorFor(ShortForm).execute('acme_convert_temperature', args, {});
      expect(result, JSON.stringify(args)).toEqual({ successful: true, result: JSON.stringify(expected), errors: [] });
      expect(await executorFor(ClassForm).execute('acme_convert_temperature', args, {})).toEqual(result);
    }
    const context = testContext();
    for (const args of [
      '{"value":-500,"from":"celsius","to":"kelvin"}',
      '{"value":"hot","from":"celsius","to":"kelvin"}',
      '{"value":1,"from":"rankine","to":"kelvin"}',
      '{}',
      'not json',
      '{"value":98.6,"from":"fahrenheit","to":"celsius","precision":4}',
    ]) {
      const result = await executorFor(ShortForm).execute('acme_convert_temperature', args, context);
      expect(await executorFor(ClassForm).execute('acme_convert_temperature', args, context), args).toEqual(result);
    }
    expect(
      (
        await executorFor(ShortForm).execute(
          'acme_convert_temperature',
          '{"value":-500,"from":"celsius","to":"kelvin"}',
          context,
        )
      ).errors[0]?.code,
    ).toBe('BELOW_ABSOLUTE_ZERO');
  });

  it('keeps the contract, with no warnings', async () => {
    const report = await verifyToolContract(ShortForm);
    expect(report.violations).toEqual([]);
    expect(report.warnings).toEqual([]);
    expect(report.strict.ok).toBe(true);
  });
});
