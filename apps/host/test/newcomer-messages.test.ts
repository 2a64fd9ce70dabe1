import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { call, respond, ScriptedResponsesServer } from '@aptix/reasoner/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, HOST_ROOT, runCli, scratch, startHost } from './support.js';
import { writeBrokenToolPackage } from './suites.js';

describe('messages a newcomer can act on, from the aptix CLI as a child process', () => {
  const space = scratch();
  const env = { APTIX_DB: space.db };
  afterAll(() => space.cleanup());

  it('bad JSON in the arguments of tools call is a usage error: exit 2, with a message that shows the fix', async () => {
    const run = await runCli(['tools', 'call', 'testing_calculator', "{operation:'add'}"], { env });
    expect(run.code).toBe(2);
    const { error } = run.json<{ error: { code: string; message: string } }>();
    expect(error.code).toBe('USAGE');
    expect(error.message).toMatch(
      /^The arguments "\{operation:'add'\}" are not valid JSON \(.+\)\. Fix: pass one JSON object in single quotes, e\.g\. aptix tools call testing_calculator '\{"operation":"add","a":1,"b":2\}'\.$/,
    );
  });

  it("JSON the schema refuses is still the tool's failure (exit 1), not a usage error", async () => {
    const run = await runCli(['tools', 'call', 'testing_calculator', '{"operation":"add"}'], { env });
    expect(run.code).toBe(1);
    expect(run.json<{ successful: boolean }>().successful).toBe(false);
  });

  it('prints a start-up contract error once: no log line repeating the aptix: line', async () => {
    const dir = writeBrokenToolPackage(space.dir);
    const run = await runCli(['check'], {
      env: {
        ...env,
        LOG_LEVEL: 'info',
        APTIX_TOOL_PACKAGES: `${dir},@aptix/tool-samples,@aptix/tool-mode-catalog,@aptix/tool-mode-change`,
      },
    });
    expect(run.code).toBe(1);
    expect(run.stderr.match(/TOOL_NAME_INVALID/g)).toHaveLength(1);
    expect(run.stderr).toMatch(
      /^aptix: Tool package "broken-tools" has a tool that breaks the contract \(TOOL_NAME_INVALID\)/,
    );
  });
});

describe('aptix chat keeps the lines typed during a turn', () => {
  it('answers lines pasted at once in order, and a pasted /exit still leaves', async () => {
    const space = scratch();
    const model = await ScriptedResponsesServer.start();
    try {
      const env = {
        APTIX_DB: space.db,
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_API_KEY: 'test-key',
        APTIX_MODEL: 'scripted-model',
        LOG_LEVEL: 'warn',
      };
      model.script(
        respond(undefined, call('call_1', 'testing_calculator', { operation: 'multiply', a: 6, b: 7 })),
        respond('6 × 7 = 42.'),
        respond('You are welcome.'),
      );
      const child = spawn(process.execPath, [BIN, 'chat'], {
        cwd: HOST_ROOT,
        env: { ...process.env, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      // Pasted in one go: the second line and /exit arrive while the first turn runs. stdin stays open,
      // so only /exit can end the chat.
      child.stdin.write('What is 6 times 7?\nThanks!\n/exit\n');
      expect(await exited, stderr).toBe(0);
      expect(stdout).toContain('6 × 7 = 42.');
      expect(stdout).toContain('You are welcome.');
      expect(stdout.indexOf('6 × 7 = 42.')).toBeLessThan(stdout.indexOf('You are welcome.'));
      expect(JSON.stringify(model.requests.at(-1)!.body.input)).toContain('Thanks!');
      child.stdin.end();
    } finally {
      await model.close();
      space.cleanup();
    }
  });
});

describe('start-up messages that point the right way, from aptix check in a folder with an aptix.config.json', () => {
  const space = scratch();
  afterAll(() => space.cleanup());
  const firstParty = ['@aptix/tool-samples', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change'];

  /** `aptix check` in a folder of its own whose aptix.config.json holds `config`; the message it fails with. */
  async function checkWith(name: string, config: Record<string, unknown>): Promise<string> {
    const dir = join(space.dir, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'aptix.config.json'), JSON.stringify(config));
    const run = await runCli(['check'], { cwd: dir, env: { APTIX_DB: `sqlite:${join(dir, 'aptix.db')}` } });
    expect(run.code, run.stderr).not.toBe(0);
    return run.json<{ error: { message: string } }>().error.message;
  }

  it('an unknown field gets "did you mean" and the table of docs/hosting.md', async () => {
    const message = await checkWith('unknown-field', { toolPackage: firstParty });
    expect(message).toMatch(
      /^Config file \/.+\/aptix\.config\.json is invalid: unknown field "toolPackage" \(did you mean "toolPackages"\?\)\. /,
    );
    expect(message).toContain('every field and its meaning is in the table of docs/hosting.md ("Configuration")');
    expect(message).not.toContain('README');
  });

  it('a misspelt tool in a mode gets "did you mean", and the configuration is blamed, not a tool package', async () => {
    const message = await checkWith('mode-typo', { modes: { extend: { general: ['testing_calculater'] } } });
    expect(message).toMatch(
      /in the "modes" of \/.+\/aptix\.config\.json, mode "general" names "testing_calculater", which no tool package offers: did you mean "testing_calculator"\? Fix: correct the name there\.$/,
    );
    expect(message).not.toContain('add the tool package');
  });

  it('a relative path to the configuration file itself says it is no package', async () => {
    const message = await checkWith('self', { toolPackages: ['./aptix.config.json', ...firstParty.slice(1)] });
    expect(message).toMatch(
      new RegExp(
        String.raw`^Tool package "\.\/aptix\.config\.json" resolves to the file ` +
          String.raw`\/.+\/self\/aptix\.config\.json, which is a JSON file \(the configuration file itself\), ` +
          String.raw`not a tool package\. Fix: point toolPackages at a tool package's folder`,
      ),
    );
  });

  it('an unreachable bridged server gets one Fix:', async () => {
    // A port nothing listens on: one taken from the system, then let go.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const bridged = {
      package: '@aptix/tool-mcp-bridge',
      options: { name: 'files', http: { url: `http://127.0.0.1:${port}/mcp` } },
    };
    const message = await checkWith('unreachable', { toolPackages: [...firstParty, bridged] });
    expect(message).toContain(`MCP server "files" (Streamable HTTP: http://127.0.0.1:${port}/mcp) cannot be reached`);
    expect(message.match(/Fix:/g)).toHaveLength(1);
    expect(message).not.toContain('..');
  });

  it('a package not installed, one slip from an installed one, gets that name and no npm install of the typo', async () => {
    const message = await checkWith('typo', { toolPackages: ['@aptix/tool-sample', ...firstParty.slice(1)] });
    expect(message).toMatch(
      new RegExp(
        String.raw`^Tool package "@aptix\/tool-sample" is not installed \(looked from .+ and from the host\); ` +
          String.raw`"@aptix\/tool-samples" is\. Fix: did you mean "@aptix\/tool-samples"\? Correct its name in ` +
          String.raw`toolPackages\.$`,
      ),
    );
    expect(message).not.toContain('npm install');
  });

  it('a package not installed and like no installed one is still to be installed', async () => {
    const message = await checkWith('missing', { toolPackages: ['@acme/weather-tools', ...firstParty.slice(1)] });
    expect(message).toMatch(
      /^Tool package "@acme\/weather-tools" is not installed \(looked from .+ and from the host\)\. Fix: `npm install @acme\/weather-tools`, or correct its name in toolPackages\.$/,
    );
  });
});

describe('the listening line of aptix serve', () => {
  it("names the console's URL, which answers", async () => {
    const space = scratch();
    const host = await startHost({ env: { APTIX_DB: space.db } });
    try {
      const line = host.logs.find((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('Aptix listening'))!;
      expect(line.msg).toContain(
        `Aptix listening on ${host.url} (console ${host.url}/console/, docs ${host.url}/docs, MCP ${host.url}/mcp)`,
      );
      expect(line.console).toBe(`${host.url}/console/`);
      expect((await fetch(`${host.url}/console/`)).status).toBe(200);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });
});
