import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run, WORKSPACE } from './support.js';

const ADAPTERS = [
  'packages/adapters/core',
  'packages/adapters/ai-sdk',
  'packages/adapters/langchain',
  'packages/adapters/openai-agents',
];
const PUBLISHED = [
  'packages/tool-contract',
  'packages/agent-sessions',
  'packages/tools/samples',
  'packages/tools/mode-catalog',
  'packages/tools/mode-change',
  'packages/tools/mcp-bridge',
  'packages/reasoner',
  'apps/host',
  ...ADAPTERS,
];
const TOOL_PACKAGES = [
  'packages/tools/samples',
  'packages/tools/mode-catalog',
  'packages/tools/mode-change',
  'packages/tools/mcp-bridge',
];
const BIN = join(WORKSPACE, 'node_modules', '.bin');

interface Manifest {
  name: string;
  private?: boolean;
  exports?: Record<string, unknown>;
  files?: string[];
  engines?: { node?: string };
  license?: string;
  repository?: { url?: string; directory?: string };
  sideEffects?: boolean;
  publishConfig?: { access?: string };
}

describe.each(PUBLISHED)('the published package in %s', (path) => {
  const dir = join(WORKSPACE, path);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

  it('declares what npm and its users need', () => {
    expect(manifest.private).not.toBe(true);
    const root = manifest.exports?.['.'] as Record<string, string> | undefined;
    expect(root?.types, 'exports["."].types').toMatch(/^\.\/dist\/.*\.d\.ts$/);
    expect(root?.import ?? root?.default).toMatch(/^\.\/dist\/.*\.js$/);
    expect(manifest.files).toContain('dist');
    expect(manifest.engines?.node).toBe('>=20.19');
    expect(manifest.license).toBe('MIT');
    expect(manifest.repository?.directory).toBe(path);
    expect(manifest.sideEffects).toBe(false);
    expect(manifest.publishConfig?.access).toBe('public');
  });

  it('has a README with a short example', () => {
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).toMatch(new RegExp(`^# ${manifest.name.replace('/', '\\/')}`));
    expect(readme).toMatch(/```(ts|sh|json)\n/);
  });

  it('is clean for publint and for are-the-types-wrong (ESM only)', () => {
    const lint = run(join(BIN, 'publint'), [dir, '--strict'], WORKSPACE, { expectOk: false });
    expect(lint.status, lint.stdout + lint.stderr).toBe(0);
    const types = run(join(BIN, 'attw'), ['--pack', dir, '--profile', 'esm-only', '--format', 'ascii'], WORKSPACE, {
      expectOk: false,
    });
    expect(types.status, types.stdout + types.stderr).toBe(0);
  }, 120_000);
});

describe('the published packages together', () => {
  // knip.jsonc names the two private workspaces it skips and the packages the host loads by name.
  it('declare as dependencies exactly the packages their shipped code loads (knip, production files only)', () => {
    const knip = run(
      join(BIN, 'knip'),
      ['--production', '--include', 'dependencies,unlisted,unresolved', '--no-progress'],
      WORKSPACE,
      { expectOk: false },
    );
    expect(knip.stdout + knip.stderr).toBe('');
    expect(knip.status).toBe(0);
  }, 120_000);
});

/** Lists the npm packages a module loads, seen by a module-resolution hook in a fresh process. */
function packagesLoadedBy(entry: string): string[] {
  const script = `
import { register } from 'node:module';
const { port1, port2 } = new MessageChannel();
const seen = new Set();
port1.on('message', (url) => seen.add(url));
port1.unref();
register('data:text/javascript,' + encodeURIComponent('let port; export function initialize(data) { port = data.port; } export async function resolve(s, c, n) { const r = await n(s, c); port.postMessage(r.url); return r; }'), { data: { port: port2 }, transferList: [port2] });
await import(${JSON.stringify(pathToFileURL(entry).href)});
await new Promise((resolve) => setTimeout(resolve, 100));
console.log(JSON.stringify([...seen]));`;
  const result = run(process.execPath, ['--input-type=module', '-e', script], WORKSPACE);
  const urls = JSON.parse(result.stdout.trim().split('\n').pop()!) as string[];
  return [
    ...new Set(
      urls
        .filter((url) => url.includes('/node_modules/'))
        .map((url) => {
          const rest = url.split('/node_modules/').pop()!.split('/');
          return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
        }),
    ),
  ];
}

describe.each(TOOL_PACKAGES)('the built entry of the tool package in %s', (path) => {
  it('loads neither Fastify nor awilix, nor any host', () => {
    const entry = join(WORKSPACE, path, 'dist', 'index.js');
    expect(existsSync(entry), `${entry} (build first)`).toBe(true);
    const loaded = packagesLoadedBy(entry);
    expect(loaded).toContain('typebox');
    expect(
      loaded.filter((name) => /^(fastify|@fastify\/.*|awilix|@aptix\/host|@modelcontextprotocol\/sdk)$/.test(name)),
    ).toEqual([]);
  });
});

describe.each(ADAPTERS)('the built entry of the framework adapter in %s', (path) => {
  it('loads neither Fastify nor awilix, nor any host', () => {
    const entry = join(WORKSPACE, path, 'dist', 'index.js');
    expect(existsSync(entry), `${entry} (build first)`).toBe(true);
    const loaded = packagesLoadedBy(entry);
    expect(loaded).toContain('ajv'); // through @aptix/tool-contract: the hook sees what the entry loads
    expect(loaded.filter((name) => /^(fastify|@fastify\/.*|awilix|@aptix\/host)$/.test(name))).toEqual([]);
  });
});

describe('the check above', () => {
  it('does see Fastify and awilix where they are loaded', () => {
    const loaded = packagesLoadedBy(join(WORKSPACE, 'apps', 'host', 'dist', 'index.js'));
    expect(loaded).toEqual(expect.arrayContaining(['fastify', 'awilix']));
  });
});
