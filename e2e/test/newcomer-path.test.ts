import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBinary } from '../runtimes/index.mjs';
import { guideSteps } from './guide.js';
import { checkNxCi, nxEnv, pluginReadmeScript, type NxCiOutcome } from './nx-workspace.js';
import { cleanEnv, freePort, runAsync, runRegistryScript, waitForHttp, type RegistryScript } from './registry.js';
import { outsideWorkspace, run, WORKSPACE, type Run } from './support.js';

const GUIDE = readFileSync(join(WORKSPACE, 'docs', 'getting-started.md'), 'utf8');

/** The guide's ```sh registry block: what the newcomer runs in the clone. */
const registryCommand = /```sh registry\n([\s\S]*?)```/.exec(GUIDE)?.[1]?.trim();

/** Nx colours its output even when piped; the assertions read the text. */
// eslint-disable-next-line no-control-regex -- the escape character starts every ANSI colour code, which is what this strips
const withoutColors = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, '');

/** What following the guide left: the workspace, the kept outputs, the running host's port. */
interface Followed {
  readonly outputs: Map<string, Run>;
  readonly all: Run[];
  readonly cwd: string;
  readonly port: number;
  readonly env: NodeJS.ProcessEnv;
}

/**
 * A newcomer on Node 22 follows docs/getting-started.md from an empty folder: the clone's `npm run
 * registry` (its `npm ci` is the suite's own install), then every ```sh e2e block in order, each in the
 * folder the previous one left, every file block written there, the ```sh e2e serve block left running.
 * Their npm configuration is the machine's registry and what the guide adds to it; the one setting of
 * this machine that comes along is where node-gyp finds Node 22's headers (nodedir), since
 * better-sqlite3 builds from source here and cannot download them.
 */
describe('a newcomer on Node 22, from an empty folder to a tool served over HTTP, MCP and the console, following docs/getting-started.md', () => {
  const scratch = outsideWorkspace('aptix-newcomer-');
  const work = join(scratch, 'work');
  let registry: RegistryScript | undefined;
  let server: ChildProcess | undefined;
  let followed: Followed;

  beforeAll(async () => {
    registry = await runRegistryScript(await freePort());
    const node22 = dirname(dirname(nodeBinary(22)));
    const home = join(scratch, 'home');
    mkdirSync(home, { recursive: true });
    mkdirSync(work, { recursive: true });
    const upstream = run('npm', ['config', 'get', 'registry'], home, { env: cleanEnv() }).stdout.trim();
    writeFileSync(
      join(home, '.npmrc'),
      `registry=${upstream}\nfund=false\naudit=false\nupdate-notifier=false\nnodedir=${node22}\n`,
    );
    const port = await freePort();
    const env = nxEnv(
      cleanEnv({
        HOME: home,
        PATH: `${join(node22, 'bin')}:${cleanEnv().PATH}`,
        npm_config_cache: process.env.npm_config_cache || join(homedir(), '.npm'),
        APTIX_PORT: String(port),
        LOG_LEVEL: 'warn',
        CI: 'true',
      }),
    );
    const outputs = new Map<string, Run>();
    const all: Run[] = [];
    const marker = '__APTIX_CWD__';
    let cwd = work;
    for (const step of guideSteps(GUIDE)) {
      if (step.kind === 'file') {
        writeFileSync(join(cwd, step.path), step.content);
        continue;
      }
      // The guide's ports are the default ones; here the registry and the host are where the test started them.
      const script = step.script
        .replaceAll('http://127.0.0.1:4873/', registry.url)
        .replaceAll('127.0.0.1:8787', `127.0.0.1:${port}`);
      if (step.serve) {
        server = spawn('bash', ['-c', script], { cwd, env, stdio: 'ignore', detached: true });
        await waitForHttp(`http://127.0.0.1:${port}/v1/tools`);
        continue;
      }
      const result = await runAsync(
        'bash',
        ['-c', `set -e\n${script}\nprintf '\\n%s%s\\n' ${marker} "$PWD"`],
        cwd,
        env,
      );
      all.push(result);
      if (result.status !== 0)
        throw new Error(
          `The guide's step failed (exit ${result.status}):\n${script}\n${result.stdout}\n${result.stderr}`,
        );
      const lines = result.stdout.trimEnd().split('\n');
      cwd = lines.pop()!.slice(marker.length);
      if (step.id) outputs.set(step.id, { ...result, stdout: lines.join('\n') });
    }
    if (!server) throw new Error('docs/getting-started.md never starts the host (no ```sh e2e serve block).');
    followed = { outputs, all, cwd, port, env };
  }, 1_500_000);

  afterAll(async () => {
    if (server?.pid !== undefined) {
      try {
        process.kill(-server.pid, 'SIGTERM'); // the process group of the one shell the test started: npx and the host under it
      } catch {
        // already gone
      }
    }
    await registry?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("starts the packages' registry with the guide's command, and the workspace block is the plugin README's, word for word", () => {
    expect(registryCommand).toBe('npm ci && npm run registry');
    const workspaceBlock = guideSteps(GUIDE).find(
      (step) => step.kind === 'sh' && step.script.includes('create-nx-workspace'),
    );
    expect(workspaceBlock?.kind === 'sh' && workspaceBlock.script).toBe(pluginReadmeScript());
  });

  it('ran on Node 22, and the contract target passed on the generated short-form tool', () => {
    const output = withoutColors(followed.all.map((step) => step.stdout).join('\n'));
    expect(output).toContain('> nx run @ws/tool-weather:contract');
    expect(output).toMatch(/^✓ @ws\/tool-weather keeps the tool contract \(1 tool, 0 violations, 0 warnings\)/m);
    expect(output).toContain('Successfully ran target contract for project @ws/tool-weather');
    const tool = readFileSync(join(followed.cwd, 'packages', 'weather', 'src', 'weather.tool.ts'), 'utf8');
    expect(tool).toContain('export const WeatherTool = defineTool({');
    expect(
      run('node', ['--version'], followed.cwd, { env: { PATH: `${dirname(nodeBinary(22))}:/usr/bin:/bin` } }).stdout,
    ).toMatch(/^v22\./);
  });

  it('installed @aptix/host, the plugin and the kit from the local registry, and the rest from the npm registry', () => {
    const lock = JSON.parse(readFileSync(join(followed.cwd, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string }>;
    };
    for (const name of ['@aptix/host', '@aptix/tool-contract', '@aptix/nx-plugin'])
      expect(lock.packages[`node_modules/${name}`]?.resolved, name).toMatch(new RegExp(`^${registry!.url}`));
    expect(lock.packages['node_modules/nx']?.resolved ?? '').not.toContain('127.0.0.1');
  });

  it("the generator wrote under the workspace's packages/*, in its scope and with its custom condition, and listed itself in nx.json", () => {
    const root = followed.cwd;
    const pkg = JSON.parse(readFileSync(join(root, 'packages', 'weather', 'package.json'), 'utf8')) as {
      name: string;
      exports: Record<string, Record<string, string>>;
    };
    expect(pkg.name).toBe('@ws/tool-weather');
    expect(pkg.exports['.']!['@ws/source']).toBe('./src/index.ts');
    const workspace = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces: string[] };
    expect(workspace.workspaces).toEqual(['packages/*']);
    const nxJson = JSON.parse(readFileSync(join(root, 'nx.json'), 'utf8')) as { plugins: unknown[] };
    expect(nxJson.plugins).toContain('@aptix/nx-plugin');
    expect(readdirSync(join(root, 'packages', 'weather', 'dist'))).toEqual(
      expect.arrayContaining(['index.js', 'index.d.ts']),
    );
  });

  it("calls the tool over HTTP with the guide's curl", () => {
    expect(JSON.parse(followed.outputs.get('http')!.stdout)).toEqual({
      successful: true,
      result: { text: 'Hello', length: 5, sessionId: null, conversationId: null },
      errors: [],
    });
  });

  it('calls the tool over MCP with the MCP SDK client, at the URL the guide gives', async () => {
    const client = new Client({ name: 'aptix-newcomer', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${followed.port}/mcp`)));
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['weather', 'agent_list_modes', 'agent_change_mode']));
      const result = (await client.callTool({ name: 'weather', arguments: { text: 'Grüße' } })) as {
        content: Array<{ type: string; text?: string }>;
        isError?: boolean;
      };
      expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
      expect(JSON.parse(result.content.find((item) => item.type === 'text')!.text!)).toMatchObject({
        text: 'Grüße',
        length: 5,
      });
    } finally {
      await client.close();
    }
  });

  it('runs the tool from the console in Chromium, at the page the guide names', async () => {
    const executablePath = run('which', ['chromium'], WORKSPACE).stdout.trim();
    const browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage();
      const url = /open\s+`(http:\/\/127\.0\.0\.1:8787\/console\/#\/try\/weather)`/.exec(GUIDE)?.[1];
      expect(url, 'the guide names the console page to open').toBeDefined();
      await page.goto(url!.replace('127.0.0.1:8787', `127.0.0.1:${followed.port}`));
      await page.locator('#field-text').fill('Hello, console');
      await page.getByRole('button', { name: 'Run weather' }).click();
      const result = page.getByLabel('InvokeResult');
      await result.waitFor({ timeout: 30_000 });
      expect(JSON.parse((await result.textContent())!)).toMatchObject({
        successful: true,
        result: { text: 'Hello, console', length: 14 },
      });
    } finally {
      await browser.close();
    }
  });

  /** Last, as it commits the workspace and then breaks the tool's schema on purpose. */
  describe("then the plugin README's CI command, in that workspace", () => {
    let ci: NxCiOutcome;
    beforeAll(async () => {
      ci = await checkNxCi(followed.cwd, followed.env);
    }, 600_000);

    it('Nx infers the targets, and nx affected runs the contract of the changed package and passes', () => {
      expect(ci.generated).toEqual(expect.arrayContaining(['package.json', 'src', 'tool-schemas.json']));
      expect(ci.targets).toEqual(expect.arrayContaining(['build', 'contract', 'typecheck']));
      expect(ci.affected.status, ci.affected.stdout + ci.affected.stderr).toBe(0);
      expect(withoutColors(ci.affected.stdout)).toContain('nx run @ws/tool-weather:contract');
    });

    it('a broken contract fails nx affected with a message that says what to fix', () => {
      expect(ci.broken.status).not.toBe(0);
      const output = withoutColors(ci.broken.stdout + ci.broken.stderr);
      expect(output).toContain('The schema of weather differs from the snapshot');
      expect(output).toContain(
        'run npx nx run @ws/tool-weather:contract --update, then commit tool-schemas.json with the changeset',
      );
    });
  });
});
