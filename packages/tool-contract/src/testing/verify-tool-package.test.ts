import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ContractErrorCode } from '../errors.js';
import { ContractCheckCode } from './codes.js';
import { formatToolPackageReport } from './format-report.js';
import { verifyToolPackage } from './verify-tool-package.js';

/** A hand-written tool with no arguments that needs a `clock`: plain JavaScript, so the package needs nothing installed. */
const toolSource = (name: string) => `
export class Tool_${name} {
  static ToolName = '${name}';
  static ToolUsageMetadata = '${name} — Usage Guide\\n\\nPrimary purpose:\\n- Tell the time.\\n\\nRules:\\n- Any time.\\n\\nArguments:\\n- none.\\n\\nError codes:\\n- INVALID_ARGUMENTS: arguments were sent.\\n\\nGood usage:\\n- {}\\n\\nBad usage:\\n- { "zone": 1 }';
  static getSchema() {
    return { type: 'function', name: '${name}', description: 'Tells the time.', parameters: { type: 'object', properties: {}, required: [], additionalProperties: false } };
  }
  name = '${name}';
  isToolFullyExecutedOnServer = true;
  #clock;
  constructor({ clock }) {
    if (typeof clock?.now !== 'function' || clock.now() !== 42) throw new TypeError('${name} needs the clock that says 42.');
    this.#clock = clock;
  }
  async execute(json) {
    let args;
    try { args = JSON.parse(json); } catch { return { successful: false, result: null, errors: [{ message: 'Not JSON.', code: 'INVALID_ARGUMENTS' }] }; }
    if (args === null || typeof args !== 'object' || Array.isArray(args) || Object.keys(args).length > 0) return { successful: false, result: null, errors: [{ message: 'Send {}.', code: 'INVALID_ARGUMENTS' }] };
    return { successful: true, result: JSON.stringify({ now: this.#clock.now() }), errors: [] };
  }
}
`;

describe('verifyToolPackage', () => {
  const root = mkdtempSync(join(tmpdir(), 'aptix-package-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let count = 0;
  const makePackage = (files: Record<string, string>, packageJson: Record<string, unknown> = {}) => {
    const dir = join(root, `package-${++count}`);
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: `@acme/tools-${count}`,
        type: 'module',
        exports: { '.': { types: './index.d.ts', import: './dist/index.mjs' } },
        ...packageJson,
      }),
    );
    mkdirSync(join(dir, 'dist'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };

  it("checks the entry its exports give to import, with the package's own createDependencies, and keeps the snapshot", async () => {
    const dir = makePackage({
      'dist/index.mjs': `${toolSource('acme_clock')}\nexport const tools = [Tool_acme_clock];\nexport const createDependencies = () => ({ clock: { now: () => 42 } });\n`,
    });
    const first = await verifyToolPackage(dir, { update: true });
    expect(first.violations).toEqual([]);
    expect(first.ok).toBe(true);
    expect(first.entry).toBe(join(dir, 'dist/index.mjs'));
    expect(first.snapshot?.status).toBe('written');
    expect(first.tools.map((tool) => [tool.tool, tool.ok, tool.standIns])).toEqual([['acme_clock', true, []]]);
    expect(JSON.parse(readFileSync(join(dir, 'tool-schemas.json'), 'utf8'))).toEqual({
      acme_clock: expect.objectContaining({ name: 'acme_clock' }),
    });

    const second = await verifyToolPackage(dir);
    expect(second).toMatchObject({ ok: true, violations: [], snapshot: { status: 'up-to-date' } });
    const text = formatToolPackageReport(second, root);
    expect(text.split('\n')[0]).toBe(`contract @acme/tools-1 (package-1 → dist/index.mjs)`);
    expect(text).toMatch(/^ {2}✓ acme_clock {2}strict, \d+ garbage inputs × 2 ways, \d+ ms$/m);
    expect(text).toMatch(/^ {2}schema snapshot: up to date$/m);
    expect(text.split('\n').at(-1)).toMatch(
      /^✓ @acme\/tools-1 keeps the tool contract \(1 tool, 0 violations, 0 warnings\) in \d+\.\d\d s$/,
    );
  });

  it('takes dependencies from the contract setup module named in package.json', async () => {
    const dir = makePackage(
      {
        'dist/index.mjs': `${toolSource('acme_set_up')}\nexport const tools = [Tool_acme_set_up];\n`,
        'contract.setup.mjs': 'export const dependencies = () => ({ clock: { now: () => 42 } });\n',
      },
      { aptix: { toolPackage: true, contract: { setup: './contract.setup.mjs' } } },
    );
    const report = await verifyToolPackage(dir, { update: true });
    expect(report.violations).toEqual([]);
    expect(report.setup).toBe('./contract.setup.mjs');
    expect(report.tools[0]).toMatchObject({ ok: true, standIns: [] });
  });

  it('says what is wrong with a package it cannot check', async () => {
    const unbuilt = makePackage({});
    rmSync(join(unbuilt, 'dist'), { recursive: true });
    expect((await verifyToolPackage(unbuilt)).violations).toEqual([
      {
        code: ContractCheckCode.PACKAGE_IMPORT_FAILED,
        message:
          '@acme/tools-3: its entry dist/index.mjs does not exist. Fix: build the package first (the contract target depends on build), or declare "exports" in package.json.',
      },
    ]);
    const empty = makePackage({ 'dist/index.mjs': 'export const tools = [];\n' });
    expect((await verifyToolPackage(empty)).violations).toEqual([
      {
        code: ContractCheckCode.PACKAGE_TOOLS_MISSING,
        message:
          '@acme/tools-4: dist/index.mjs exports an empty `tools` list. Fix: export const tools = [YourTool] as const satisfies ToolList;',
      },
    ]);
    const throwing = makePackage({ 'dist/index.mjs': "throw new Error('no config');\n" });
    expect((await verifyToolPackage(throwing)).violations).toEqual([
      {
        code: ContractCheckCode.PACKAGE_IMPORT_FAILED,
        message:
          '@acme/tools-5: importing dist/index.mjs failed: Error: no config. Fix: the entry must import cleanly with no setup.',
      },
    ]);
  });

  it('finds tools that clash by name and a createDependencies that throws', async () => {
    const dir = makePackage({
      'dist/index.mjs': `${toolSource('acme_twin')}\nexport const tools = [Tool_acme_twin, Tool_acme_twin];\nexport const createDependencies = () => { throw new Error('no database'); };\n`,
    });
    const report = await verifyToolPackage(dir, { update: true });
    expect(report.ok).toBe(false);
    expect(report.violations.map((violation) => violation.code)).toEqual([
      ContractCheckCode.PACKAGE_SETUP_FAILED,
      ContractErrorCode.DUPLICATE_TOOL,
    ]);
    expect(report.violations[0]!.message).toBe(
      '@acme/tools-6: its createDependencies() threw: Error: no database. A host calls it at start-up and would fail the same way. Fix: make it work with only { logger }.',
    );
    expect(report.violations[1]!.message).toBe(
      '@acme/tools-6 exports more than one tool named "acme_twin": a host would refuse to start. Fix: give each tool its own name, and list each class once.',
    );
    // Without its clock, each tool fails to build, and says how to give it one.
    expect(report.tools[0]!.violations.map((violation) => violation.code)).toEqual([
      ContractCheckCode.TOOL_NOT_CONSTRUCTIBLE,
    ]);
  });

  it('checks prompts and resources beside the tools, and keeps their snapshot in unit-schemas.json apart from tool-schemas.json', async () => {
    const units = `
export const prompts = [{ kind: 'prompt', name: 'acme_ask', description: 'Asks.', args: { type: 'object', properties: { topic: { type: 'string', description: 'The topic.' } }, required: ['topic'] }, render: ({ topic }) => 'About ' + topic }];
export const resources = [{ kind: 'resource', name: 'acme_doc', uri: 'acme://doc', mimeType: 'text/plain', read: () => 'doc' }];
`;
    const dir = makePackage({
      'dist/index.mjs': `${toolSource('acme_clock')}\nexport const tools = [Tool_acme_clock];\nexport const createDependencies = () => ({ clock: { now: () => 42 } });\n${units}`,
    });
    const missing = await verifyToolPackage(dir, { crossProcess: false });
    expect(missing.violations.map((violation) => violation.code)).toEqual([
      ContractCheckCode.SCHEMA_SNAPSHOT_MISSING,
      ContractCheckCode.SCHEMA_SNAPSHOT_MISSING,
    ]);
    const written = await verifyToolPackage(dir, { update: true, crossProcess: false });
    expect(written.violations).toEqual([]);
    expect(written.units).toMatchObject({ prompts: ['acme_ask'], resources: ['acme_doc'] });
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'tool-schemas.json'), 'utf8')))).toEqual(['acme_clock']);
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'unit-schemas.json'), 'utf8')))).toEqual([
      'prompt:acme_ask',
      'resource:acme_doc',
    ]);

    // A prompt argument that is not a string, and a resource URI that climbs, are violations of the package.
    const brokenDir = makePackage({
      'dist/index.mjs':
        `${toolSource('acme_clock')}\nexport const tools = [Tool_acme_clock];\nexport const ` +
        `createDependencies = () => ({ clock: { now: () => 42 } ` +
        `});\n${units.replace("topic: { type: 'string'", "topic: { type: 'integer'").replace('acme://doc', 'acme://docs/../secret')}`,
    });
    const broken = await verifyToolPackage(brokenDir, { update: true, crossProcess: false });
    expect(broken.ok).toBe(false);
    expect(broken.violations.map((violation) => violation.code)).toEqual(
      expect.arrayContaining([ContractErrorCode.PROMPT_ARGUMENTS_INVALID, ContractErrorCode.RESOURCE_URI_INVALID]),
    );
    expect(broken.violations.find((v) => v.code === ContractErrorCode.PROMPT_ARGUMENTS_INVALID)!.message).toMatch(
      /MCP prompt arguments are strings/,
    );
  });
});
