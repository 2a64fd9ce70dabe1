import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { FIRST_PARTY_TOOL_NAMES, sampleModes } from '../test/modes.fixture.js';
import { CapturingAdminLogger, testContext } from '@aptix/tool-contract/testing';
import {
  defaultCatalogPath,
  ListModesTool,
  loadModeCatalog,
  loadModeCatalogSync,
  ModeCatalog,
  ModeCatalogError,
  ModeCatalogErrorCode,
  type AgentModeSummary,
} from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'aptix-mode-catalog-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function writeCatalog(content: unknown): string {
  const path = join(dir, `modes-${++files}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

/** Loads the file and returns the error it must fail with. */
async function loadError(path: string): Promise<ModeCatalogError> {
  const error = await loadModeCatalog(path).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ModeCatalogError);
  // The synchronous loader fails the same way.
  expect(() => loadModeCatalogSync(path)).toThrow((error as Error).message);
  return error as ModeCatalogError;
}

function withMode(index: number, change: (mode: Record<string, unknown>) => void): { modes: unknown[] } {
  const modes = sampleModes() as unknown as Record<string, unknown>[];
  change(modes[index]!);
  return { modes };
}

describe('loading a catalog file', () => {
  it('accepts null role hints and example utterances (TUL-010 §2), which agent_list_modes presents as empty lists', async () => {
    const path = writeCatalog(
      withMode(1, (mode) => Object.assign(mode, { humanRoleHints: null, exampleUtterances: null })),
    );
    const catalog = await loadModeCatalog(path);
    expect(catalog.getMode('ddr_authoring')).toMatchObject({ humanRoleHints: null, exampleUtterances: null });
    const tool = new ListModesTool({ logger: new CapturingAdminLogger(), modeCatalog: catalog });
    const result = await tool.execute('{"includeExamples":true}', testContext());
    const { modes } = JSON.parse(result.result as string) as { modes: Array<Record<string, unknown>> };
    expect(modes[1]).toMatchObject({ key: 'ddr_authoring', humanRoleHints: [], exampleUtterances: [] });
  });

  it('loads a valid file, keeping the catalog order', async () => {
    const path = writeCatalog({ modes: sampleModes() });
    const catalog = await loadModeCatalog(path);
    expect(catalog.source).toBe(path);
    expect(catalog.keys).toEqual(['general', 'ddr_authoring']);
    expect(await catalog.getAllModes()).toEqual(sampleModes());
    expect(catalog.defaultMode.key).toBe('general');
    expect(loadModeCatalogSync(pathToFileURL(path)).keys).toEqual(catalog.keys);
  });

  it('refuses an id that is not 32 lowercase hex characters, naming the file and the field', async () => {
    const error = await loadError(
      writeCatalog(withMode(1, (mode) => (mode.id = '22222222-2222-2222-2222-222222222222'))),
    );
    expect(error.code).toBe(ModeCatalogErrorCode.CATALOG_INVALID);
    expect(error.source).toMatch(/modes-\d+\.json$/);
    expect(error.message).toContain(error.source);
    expect(error.message).toContain(
      '$.modes[1].id must be 32 lowercase hexadecimal characters (a GUID without hyphens), got "22222222-2222',
    );
    expect(error.issues).toEqual([expect.objectContaining({ path: '$.modes[1].id' })]);
  });

  it('refuses upper-case hex in an id', async () => {
    const error = await loadError(writeCatalog(withMode(0, (mode) => (mode.id = 'ABCDEFABCDEFABCDEFABCDEFABCDEFAB'))));
    expect(error.issues.map((issue) => issue.path)).toEqual(['$.modes[0].id']);
  });

  it('refuses a key that is not snake_case', async () => {
    const error = await loadError(writeCatalog(withMode(1, (mode) => (mode.key = 'DdrAuthoring'))));
    expect(error.message).toContain('$.modes[1].key must be snake_case');
  });

  it('refuses a duplicate key, pointing at the second occurrence and the first', async () => {
    const error = await loadError(writeCatalog(withMode(1, (mode) => (mode.key = 'general'))));
    expect(error.code).toBe(ModeCatalogErrorCode.DUPLICATE_MODE_KEY);
    expect(error.message).toContain(error.source);
    expect(error.message).toContain('$.modes[1].key repeats the key "general" of $.modes[0]');
  });

  it('refuses a duplicate id', async () => {
    const error = await loadError(writeCatalog(withMode(1, (mode) => (mode.id = '11111111111111111111111111111111'))));
    expect(error.code).toBe(ModeCatalogErrorCode.DUPLICATE_MODE_ID);
    expect(error.message).toContain('$.modes[1].id repeats the id "11111111111111111111111111111111" of $.modes[0]');
  });

  it('refuses two default modes', async () => {
    const error = await loadError(writeCatalog(withMode(1, (mode) => (mode.isDefault = true))));
    expect(error.code).toBe(ModeCatalogErrorCode.MULTIPLE_DEFAULT_MODES);
    expect(error.message).toContain(error.source);
    expect(error.message).toContain('$.modes[1].isDefault is true, but $.modes[0] ("general") is already the default');
  });

  it('refuses a catalog without a default mode', async () => {
    const error = await loadError(writeCatalog(withMode(0, (mode) => (mode.isDefault = false))));
    expect(error.code).toBe(ModeCatalogErrorCode.NO_DEFAULT_MODE);
    expect(error.message).toContain(error.source);
    expect(error.message).toContain('$.modes has no default mode');
  });

  it('refuses malformed JSON, with the line and column', async () => {
    const path = writeCatalog('{\n  "modes": [\n    { "key": "general" }\n    { "key": "other" }\n  ]\n}\n');
    const error = await loadError(path);
    expect(error.code).toBe(ModeCatalogErrorCode.CATALOG_MALFORMED_JSON);
    expect(error.message).toContain(path);
    expect(error.message).toMatch(/is not valid JSON \(line 4, column 5\)/);
    expect(error.issues[0]!.path).toBe('$');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('refuses a truncated file', async () => {
    const error = await loadError(writeCatalog('{ "modes": ['));
    expect(error.code).toBe(ModeCatalogErrorCode.CATALOG_MALFORMED_JSON);
    expect(error.message).toMatch(/line 1, column 13/);
  });

  it('reports a missing file as unreadable, with the cause', async () => {
    const path = join(dir, 'does-not-exist.json');
    const error = await loadError(path);
    expect(error.code).toBe(ModeCatalogErrorCode.CATALOG_UNREADABLE);
    expect(error.message).toContain(path);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('reports every schema problem at once: missing, misspelt and mistyped fields', async () => {
    const error = await loadError(
      writeCatalog(
        withMode(0, (mode) => {
          delete mode.description;
          mode.isdefault = true;
          mode.tools = 'agent_hello_world';
        }),
      ),
    );
    expect(error.code).toBe(ModeCatalogErrorCode.CATALOG_INVALID);
    expect(error.issues.map((issue) => issue.path).sort()).toEqual([
      '$.modes[0].description',
      '$.modes[0].isdefault',
      '$.modes[0].tools',
    ]);
    expect(error.message).toContain('$.modes[0].description is required but missing');
    expect(error.message).toContain('$.modes[0].isdefault is not a known field (known fields: id, key, displayName');
    expect(error.message).toContain('$.modes[0].tools must be an array, got "agent_hello_world"');
  });

  it('refuses an empty list of modes, a tool listed twice, an invalid tool name and an empty string', async () => {
    expect((await loadError(writeCatalog({ modes: [] }))).message).toContain('$.modes must hold at least 1 item(s)');
    expect(
      (await loadError(writeCatalog(withMode(1, (mode) => (mode.tools = ['agent_hello_world', 'agent_hello_world'])))))
        .message,
    ).toContain('$.modes[1].tools lists "agent_hello_world" twice (items 0 and 1)');
    expect((await loadError(writeCatalog(withMode(1, (mode) => (mode.tools = ['Web-Search']))))).issues[0]!.path).toBe(
      '$.modes[1].tools[0]',
    );
    expect((await loadError(writeCatalog(withMode(0, (mode) => (mode.displayName = ''))))).message).toContain(
      '$.modes[0].displayName must not be empty',
    );
  });

  it('refuses a document that is not { modes: [...] }', async () => {
    expect((await loadError(writeCatalog(sampleModes()))).message).toContain('$ must be an object, got an array of 2');
    expect((await loadError(writeCatalog({ modes: sampleModes(), version: 2 }))).message).toContain(
      '$.version is not a known field (known fields: modes)',
    );
  });
});

describe('a loaded catalog', () => {
  it('is deeply frozen: nothing in it can be changed at run time', async () => {
    const catalog = ModeCatalog.fromModes(sampleModes());
    const modes = await catalog.getAllModes();
    expect(Object.isFrozen(catalog)).toBe(true);
    expect(Object.isFrozen(modes)).toBe(true);
    expect(Object.isFrozen(modes[0])).toBe(true);
    expect(Object.isFrozen(modes[0]!.tools)).toBe(true);
    expect(Object.isFrozen(modes[0]!.humanRoleHints)).toBe(true);
    expect(() => (modes as AgentModeSummary[]).push(modes[0]!)).toThrow(TypeError);
    expect(() => (modes[0]!.tools as string[]).push('testing_delay')).toThrow(TypeError);
    expect(() => ((modes[0] as { isDefault: boolean }).isDefault = false)).toThrow(TypeError);
    expect(await catalog.getAllModes()).toBe(modes);
  });

  it('copies what it is built from, so the caller cannot change it later', () => {
    const input = sampleModes();
    const catalog = ModeCatalog.fromModes(input);
    input[0]!.tools.push('testing_delay');
    input[0]!.key = 'changed';
    expect(catalog.modes[0]!.tools).toEqual(['agent_hello_world']);
    expect(catalog.keys).toEqual(['general', 'ddr_authoring']);
    expect(Object.isFrozen(input)).toBe(false);
  });

  it('is checked the same way when built in memory', () => {
    const modes = sampleModes();
    modes[1]!.isDefault = true;
    expect(() => ModeCatalog.fromModes(modes)).toThrow(
      /^Mode catalog \(in-memory catalog\) is invalid: \$\.modes\[1\]\.isDefault is true/,
    );
  });

  it('serves as the sessions ModeDirectory: the keys in order and the default key', async () => {
    const catalog = ModeCatalog.fromModes(sampleModes());
    expect(await catalog.modeKeys()).toEqual(['general', 'ddr_authoring']);
    expect(await catalog.defaultModeKey()).toBe('general');
  });

  it('looks modes up by key, and names the valid keys for an unknown one', () => {
    const catalog = ModeCatalog.fromModes(sampleModes());
    expect(catalog.getMode('ddr_authoring')?.displayName).toBe('DDR authoring');
    expect(catalog.getMode('nope')).toBeUndefined();
    expect(() => catalog.requireMode('nope')).toThrow(
      'Unknown mode "nope": mode catalog (in-memory catalog) has no mode with that key. Valid modes: general, ddr_authoring.',
    );
  });

  it('rejects with the abort reason when the caller has already cancelled', async () => {
    const catalog = ModeCatalog.fromModes(sampleModes());
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(catalog.getAllModes(controller.signal)).rejects.toThrow('stop');
    await expect(catalog.modeKeys(controller.signal)).rejects.toThrow('stop');
  });
});

describe('the shipped catalog (modes.json)', () => {
  it('loads, with general as the default, then ddr_authoring and tool_diagnostics', async () => {
    const catalog = await loadModeCatalog();
    expect(catalog.source).toBe(defaultCatalogPath);
    expect(defaultCatalogPath).toMatch(/mode-catalog[\\/]modes\.json$/);
    expect(catalog.keys).toEqual(['general', 'ddr_authoring', 'tool_diagnostics']);
    expect(await catalog.defaultModeKey()).toBe('general');
  });

  it('gives every mode a real description, prompt summary, role hints and example utterances', async () => {
    for (const mode of (await loadModeCatalog()).modes) {
      expect(mode.description.length, mode.key).toBeGreaterThan(40);
      expect(mode.systemPromptSummary.length, mode.key).toBeGreaterThan(100);
      expect(mode.humanRoleHints?.length, mode.key).toBeGreaterThanOrEqual(2);
      expect(mode.exampleUtterances?.length, mode.key).toBeGreaterThanOrEqual(3);
    }
  });

  it('names only first-party tools, and leaves the always-offered ones to the selection', async () => {
    const catalog = await loadModeCatalog();
    for (const mode of catalog.modes) {
      for (const tool of mode.tools) expect(FIRST_PARTY_TOOL_NAMES, `${mode.key} offers ${tool}`).toContain(tool);
      expect(mode.tools).not.toContain('agent_change_mode');
      expect(mode.tools).not.toContain('agent_list_modes');
    }
    expect(catalog.requireMode('tool_diagnostics').tools).toEqual(
      expect.arrayContaining(['testing_ping_pong', 'testing_delay', 'testing_failure_injection']),
    );
  });
});
