import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  freePort,
  publicPackages,
  runAsync,
  runRegistryScript,
  stringEnv,
  waitForHttp,
  type RegistryScript,
  type WorkspacePackage,
} from './registry.js';
import { outsideWorkspace, WORKSPACE, type Run } from './support.js';
import { guideSteps, type GuideOutcome } from './guide.js';

/** An outcome whose every property access throws the flow's error, so each of its tests fails with it. */
function failing(reason: unknown): unknown {
  return new Proxy(
    {},
    {
      get: () => {
        throw reason instanceof Error ? reason : new Error(String(reason));
      },
    },
  );
}

/** Connects over stdio; the first start may install @aptix/host with npx (a native build), hence the long time-out. */
async function connectStdio(client: Client, transport: StdioClientTransport): Promise<void> {
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    await client.connect(transport, { timeout: 400_000 });
  } catch (error) {
    throw new Error(`The MCP server over stdio did not start: ${(error as Error).message}\n${stderr.slice(-4000)}`, {
      cause: error,
    });
  }
}

async function mcpToolCall(client: Client, name: string, args: Record<string, unknown>): Promise<unknown> {
  const result = (await client.callTool({ name, arguments: args })) as {
    content: Array<{ type: string; text?: string }>;
    isError?: boolean;
  };
  expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
  return JSON.parse(result.content.find((item) => item.type === 'text')!.text!);
}

/**
 * What a third party gets from npm, on a real registry: Verdaccio on loopback, the workspace's public
 * packages published to it as a release does, and folders whose only npm configuration is an .npmrc
 * naming that registry (HOME points at a folder holding just that file). One registry serves every
 * flow; the flows run side by side to keep the suite within a few minutes.
 */
describe('a third party, with the packages on a real npm registry', () => {
  const scratch = outsideWorkspace('aptix-registry-');
  const home = join(scratch, 'home');
  let registry: RegistryScript | undefined;
  let published: WorkspacePackage[] = [];
  let env: NodeJS.ProcessEnv;
  let guide: GuideOutcome;
  let readmeMcp: { tools: string[]; product: unknown };
  let offline: {
    host: Record<string, { resolved?: string }>;
    toolPackage: Record<string, { resolved?: string }>;
    check: Run;
  };
  let aiSdk: { runs: Run[]; ai: string | undefined };

  beforeAll(async () => {
    // The registry a newcomer starts: `npm run registry`, which publishes every public package and prints its .npmrc line.
    registry = await runRegistryScript(await freePort());
    published = [...registry.published];
    // The only npm configuration of the third party: an .npmrc naming the registry. Two settings of this
    // machine come along: its npm cache (a cache, so tarballs already fetched are not fetched again), and
    // where node-gyp finds Node's headers (nodedir) when the machine sets one: better-sqlite3 builds from
    // source on install, and node-gyp cannot download the headers here.
    // The headers of the running Node, when it was installed with them (as Debian's and the official packages are).
    const prefix = dirname(dirname(process.execPath));
    const nodedir = existsSync(join(prefix, 'include', 'node', 'node_version.h')) ? prefix : '';
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, '.npmrc'),
      `registry=${registry.url}\nfund=false\naudit=false\nupdate-notifier=false\n${nodedir.startsWith('/') ? `nodedir=${nodedir}\n` : ''}`,
    );
    env = cleanEnv({
      HOME: home,
      npm_config_cache: process.env.npm_config_cache || join(homedir(), '.npm'),
      LOG_LEVEL: 'warn',
      CI: 'true',
    });

    // Side by side, and each to its end: a failed flow fails its own tests, with its own error.
    const settled = await Promise.allSettled([
      followGuide(join(scratch, 'guide'), env),
      readmeMcpConfiguration(join(scratch, 'readme-mcp'), env),
      offlinePath(join(scratch, 'offline'), env),
      frameworksAiSdk(join(scratch, 'ai-sdk'), env),
    ]);
    const [a, b, c, d] = settled.map((outcome) =>
      outcome.status === 'fulfilled' ? outcome.value : failing(outcome.reason),
    );
    [guide, readmeMcp, offline, aiSdk] = [
      a as GuideOutcome,
      b as typeof readmeMcp,
      c as typeof offline,
      d as typeof aiSdk,
    ];
  }, 1_500_000);

  afterAll(async () => {
    await registry?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('npm run registry published every public package, printed the one .npmrc line, and never asks upstream for @aptix', async () => {
    expect(published.map((pkg) => pkg.name).sort()).toEqual(
      publicPackages()
        .map((pkg) => pkg.name)
        .sort(),
    );
    expect(published.map((pkg) => pkg.name)).toEqual(
      expect.arrayContaining([
        '@aptix/agent-sessions',
        '@aptix/host',
        '@aptix/nx-plugin',
        '@aptix/reasoner',
        '@aptix/tool-contract',
        '@aptix/tool-mode-catalog',
        '@aptix/tool-mode-change',
        '@aptix/tool-samples',
      ]),
    );
    expect(registry!.line).toMatch(/^@aptix:registry=http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(registry!.output.match(/^@aptix:registry=/gm)).toHaveLength(1);
    const manifest = (await (await fetch(`${registry!.url}@aptix%2ftool-contract`)).json()) as {
      'dist-tags': { latest: string };
    };
    expect(manifest['dist-tags'].latest).toBe(published.find((pkg) => pkg.name === '@aptix/tool-contract')!.version);
    expect((await fetch(`${registry!.url}@aptix%2fnot-published`)).status).toBe(404);
  });

  describe('docs/tool-packages.md, command by command', () => {
    it('compiled the new package, passed the contract kit and wrote its schema snapshot', () => {
      expect(readdirSync(join(guide.work, 'acme-weather', 'dist'))).toEqual(
        expect.arrayContaining(['index.js', 'index.d.ts', 'convert-temperature.tool.js']),
      );
      const snapshot = JSON.parse(
        readFileSync(join(guide.work, 'acme-weather', 'tool-schemas.json'), 'utf8'),
      ) as Record<string, { parameters: { properties: object } }>;
      expect(Object.keys(snapshot.acme_convert_temperature!.parameters.properties)).toEqual([
        'from',
        'precision',
        'to',
        'value',
      ]);
    });

    it('installed @aptix/host and its dependencies from the registry', () => {
      const lock = JSON.parse(readFileSync(join(guide.work, 'acme-host', 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { resolved?: string }>;
      };
      for (const name of ['@aptix/host', '@aptix/agent-sessions', '@aptix/tool-contract'])
        expect(lock.packages[`node_modules/${name}`]?.resolved, name).toMatch(new RegExp(`^${registry!.url}`));
    });

    it('aptix check passes, and the tool joined the general mode by its Modes', () => {
      const report = JSON.parse(guide.outputs.get('check')!.stdout) as {
        ok: boolean;
        warnings: string[];
        toolPackages: Array<{ name: string }>;
      };
      expect(report.ok).toBe(true);
      expect(report.warnings).toEqual([]);
      expect(report.toolPackages.map((p) => p.name)).toContain('@acme/weather-tools');
      const { tools } = JSON.parse(guide.outputs.get('list')!.stdout) as {
        tools: Array<{ name: string; strict: boolean }>;
      };
      expect(tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['agent_hello_world', 'agent_change_mode', 'acme_convert_temperature']),
      );
      expect(tools.find((t) => t.name === 'acme_convert_temperature')!.strict).toBe(true);
    });

    it('aptix tools call runs it, with the optional argument left out', () => {
      expect(JSON.parse(guide.outputs.get('call')!.stdout)).toEqual({
        successful: true,
        result: { value: 212, unit: 'fahrenheit', sessionId: null, conversationId: null },
        errors: [],
      });
    });

    it('aptix serve serves it over HTTP, with the optional argument given', () => {
      expect(JSON.parse(guide.outputs.get('http')!.stdout)).toEqual({
        successful: true,
        result: { value: 293.2, unit: 'kelvin', sessionId: null, conversationId: null },
        errors: [],
      });
    });

    it('serves it over MCP: Streamable HTTP, and stdio with the configuration the guide shows', () => {
      expect(guide.mcp.http).toEqual(expect.arrayContaining(['acme_convert_temperature']));
      expect(guide.mcp.stdioTools).toEqual(expect.arrayContaining(['acme_convert_temperature']));
      expect(guide.mcp.stdioResult).toMatchObject({ value: 32, unit: 'fahrenheit' });
    });

    it('a malformed third-party tool stops aptix check with a clear message, printed once', () => {
      const broken = guide.outputs.get('broken')!;
      expect(broken.status).toBe(1);
      expect(broken.stderr).toContain(
        'Tool package "broken-tools" has a tool that breaks the contract (TOOL_NAME_INVALID)',
      );
      expect(broken.stderr).toContain('"acme_weather"');
      expect(broken.stderr.match(/TOOL_NAME_INVALID/g)).toHaveLength(1);
    });
  });

  it("the README's MCP configuration starts a host with nothing cloned or installed, for the MCP SDK client over stdio", () => {
    expect(readmeMcp.tools).toEqual(
      expect.arrayContaining(['agent_hello_world', 'testing_calculator', 'agent_change_mode']),
    );
    expect(readmeMcp.product).toMatchObject({ value: 42 });
  });

  it('the offline path: a host installs from the tarballs the guide names for it, and starts; a tool package gets the contract kit alone', () => {
    const aptix = (lock: Record<string, { resolved?: string }>) =>
      Object.entries(lock).filter(([path]) => path.startsWith('node_modules/@aptix/'));
    expect(aptix(offline.host).length).toBeGreaterThanOrEqual(9);
    for (const [path, entry] of aptix(offline.host)) expect(entry.resolved, path).toMatch(/^file:.*\.tgz$/);
    expect(offline.check.status, offline.check.stderr).toBe(0);
    expect(aptix(offline.toolPackage).map(([path]) => path)).toEqual(['node_modules/@aptix/tool-contract']);
    expect(Object.keys(offline.toolPackage)).not.toContain('node_modules/better-sqlite3');
  });

  it("docs/frameworks.md's AI SDK install lines get ai 7 on this Node, and a later npm install in that folder still works (no ERESOLVE)", () => {
    for (const run of aiSdk.runs) expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(aiSdk.ai).toMatch(/^7\./);
  });

  /** Follows the guide in `dir`: each ```sh e2e block run in the folder the previous one left, each file block written there. */
  async function followGuide(dir: string, baseEnv: NodeJS.ProcessEnv): Promise<GuideOutcome> {
    mkdirSync(dir, { recursive: true });
    const port = await freePort();
    const stepEnv = { ...baseEnv, APTIX_PORT: String(port) };
    const outputs = new Map<string, Run>();
    let cwd = dir;
    let server: ReturnType<typeof spawn> | undefined;
    const marker = '__APTIX_CWD__';
    try {
      for (const step of guideSteps(readFileSync(join(WORKSPACE, 'docs', 'tool-packages.md'), 'utf8'))) {
        if (step.kind === 'file') {
          mkdirSync(dirname(join(cwd, step.path)), { recursive: true });
          writeFileSync(join(cwd, step.path), step.content);
          continue;
        }
        // The guide's port is the default one; here the host listens where APTIX_PORT says.
        const script = step.script.replaceAll('127.0.0.1:8787', `127.0.0.1:${port}`);
        if (step.serve) {
          server = spawn('bash', ['-c', script], { cwd, env: stepEnv, stdio: 'ignore', detached: true });
          await waitForHttp(`http://127.0.0.1:${port}/v1/tools`);
          continue;
        }
        // The marker goes on a line of its own: the step's last output line may have no newline (curl's does not).
        const result = await runAsync(
          'bash',
          ['-c', `set -e\n${script}\nprintf '\\n%s%s\\n' ${marker} "$PWD"`],
          cwd,
          stepEnv,
        );
        if (step.fails) {
          outputs.set(step.id ?? 'failed', result);
          continue;
        }
        if (result.status !== 0)
          throw new Error(
            `The guide's step failed (exit ${result.status}):\n${step.script}\n${result.stdout}\n${result.stderr}`,
          );
        const lines = result.stdout.trimEnd().split('\n');
        cwd = lines.pop()!.slice(marker.length);
        if (step.id) outputs.set(step.id, { ...result, stdout: lines.join('\n') });
      }
      if (!server) throw new Error('The guide never starts the host (no ```sh e2e serve block).');
      // MCP over Streamable HTTP, against the server the guide started.
      const http = new Client({ name: 'aptix-e2e', version: '1.0.0' });
      await http.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      const httpTools = (await http.listTools()).tools.map((tool) => tool.name);
      await http.close();
      // MCP over stdio, with the client configuration the guide shows, in the host's folder.
      const config = JSON.parse(readFileSync(join(cwd, 'mcp.json'), 'utf8')) as {
        mcpServers: Record<string, { command: string; args: string[] }>;
      };
      const server0 = Object.values(config.mcpServers)[0]!;
      const stdio = new Client({ name: 'aptix-e2e', version: '1.0.0' });
      await connectStdio(
        stdio,
        new StdioClientTransport({
          command: server0.command,
          args: server0.args,
          cwd: join(dir, 'acme-host'),
          env: stringEnv(stepEnv),
          stderr: 'pipe',
        }),
      );
      const stdioTools = (await stdio.listTools()).tools.map((tool) => tool.name);
      const stdioResult = await mcpToolCall(stdio, 'acme_convert_temperature', {
        value: 0,
        from: 'celsius',
        to: 'fahrenheit',
      });
      await stdio.close();
      return { work: dir, outputs, mcp: { http: httpTools, stdioTools, stdioResult } };
    } finally {
      if (server?.pid !== undefined) {
        try {
          process.kill(-server.pid, 'SIGTERM'); // the process group of the one shell this test started: npx and the host under it
        } catch {
          // already gone
        }
      }
    }
  }
});

/** The README's stdio configuration, in an empty folder: npx fetches @aptix/host from the registry. */
async function readmeMcpConfiguration(
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ tools: string[]; product: unknown }> {
  mkdirSync(dir, { recursive: true });
  const readme = readFileSync(join(WORKSPACE, 'README.md'), 'utf8');
  const block = [...readme.matchAll(/```json\n([\s\S]*?)```/g)]
    .map((match) => match[1]!)
    .find((text) => text.includes('"mcpServers"'));
  if (!block) throw new Error('The README shows no mcpServers configuration');
  const { command, args } = Object.values(
    (JSON.parse(block) as { mcpServers: Record<string, { command: string; args: string[] }> }).mcpServers,
  )[0]!;
  const client = new Client({ name: 'aptix-e2e', version: '1.0.0' });
  // A cache of its own: npx keeps what it installs under the npm cache (_npx), and a copy left there by
  // another run must not stand in for a fresh install from the registry.
  const fresh = { ...env, npm_config_cache: join(dir, 'npm-cache') };
  await connectStdio(
    client,
    new StdioClientTransport({ command, args, cwd: dir, env: stringEnv(fresh), stderr: 'pipe' }),
  );
  try {
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    const product = await mcpToolCall(client, 'testing_calculator', { operation: 'multiply', a: 6, b: 7 });
    return { tools, product };
  } finally {
    await client.close();
  }
}

/** docs/frameworks.md's ```sh e2e install lines (the AI SDK's), run in an empty folder, then a plain `npm install`, as a newcomer's next one. */
async function frameworksAiSdk(dir: string, env: NodeJS.ProcessEnv): Promise<{ runs: Run[]; ai: string | undefined }> {
  mkdirSync(dir, { recursive: true });
  const steps = guideSteps(readFileSync(join(WORKSPACE, 'docs', 'frameworks.md'), 'utf8')).flatMap((step) =>
    step.kind === 'sh' ? [step.script] : [],
  );
  if (steps.length === 0) throw new Error('docs/frameworks.md has no ```sh e2e block');
  const runs: Run[] = [];
  for (const script of ['npm init -y >/dev/null', ...steps, 'npm install']) {
    const result = await runAsync('bash', ['-c', `set -e\n${script}`], dir, env);
    runs.push(result);
    if (result.status !== 0) break;
  }
  const installed = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  return { runs, ai: installed.packages['node_modules/ai']?.version };
}

/** The commands of an ```sh tarballs=<id> block of docs/tool-packages.md. */
function tarballCommand(id: string): string {
  const guide = readFileSync(join(WORKSPACE, 'docs', 'tool-packages.md'), 'utf8');
  const block = new RegExp(`\`\`\`sh tarballs=${id}\\n([\\s\\S]*?)\`\`\``).exec(guide)?.[1];
  if (!block) throw new Error(`docs/tool-packages.md has no \`\`\`sh tarballs=${id} block`);
  return block;
}

type Lock = Record<string, { resolved?: string }>;

/** The guide's offline path: every public package packed into one folder, and a host and a tool package installed from the tarballs the guide names for each. */
async function offlinePath(
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ host: Lock; toolPackage: Lock; check: Run }> {
  const packed = join(dir, 'packed');
  const pack = await runAsync(
    process.execPath,
    [join(WORKSPACE, 'scripts', 'pack-all.mjs'), packed],
    WORKSPACE,
    cleanEnv(),
  );
  if (pack.status !== 0) throw new Error(`pack-all failed:\n${pack.stdout}\n${pack.stderr}`);
  const install = async (folder: string, id: string): Promise<Lock> => {
    const app = join(dir, folder);
    mkdirSync(app, { recursive: true });
    // The guide's command as it stands, with P where the guide says: the packed folder.
    const result = await runAsync('bash', ['-c', `set -e\nnpm init -y >/dev/null\n${tarballCommand(id)}`], app, {
      ...env,
      P: packed,
    });
    if (result.status !== 0)
      throw new Error(`npm install of the ${id} tarballs failed:\n${result.stdout}\n${result.stderr}`);
    return (JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Lock }).packages;
  };
  const [host, toolPackage] = await Promise.all([install('host', 'host'), install('tool-package', 'tool-package')]);
  const check = await runAsync(
    process.execPath,
    [join(dir, 'host', 'node_modules', '@aptix', 'host', 'bin', 'aptix.js'), 'check'],
    join(dir, 'host'),
    env,
  );
  return { host, toolPackage, check };
}
