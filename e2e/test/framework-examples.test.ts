import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBinary } from '../runtimes/index.mjs';
import {
  startOpenAiCompatibleServer,
  type ModelCall,
  type OpenAiCompatibleServer,
} from './openai-compatible-server.js';
import { cleanEnv, runAsync } from './registry.js';
import { WORKSPACE, type Run } from './support.js';

const GUIDE = readFileSync(join(WORKSPACE, 'docs', 'frameworks.md'), 'utf8');
const EXAMPLES = join(WORKSPACE, 'docs', 'examples');

/** The commands of docs/frameworks.md's ```sh examples blocks, one per line, comments taken off. */
function exampleCommands(): string[] {
  return [...GUIDE.matchAll(/```sh examples\n([\s\S]*?)```/g)].flatMap(([, body]) =>
    body!
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line !== ''),
  );
}

/** The example file a command runs. */
const fileOf = (command: string): string => /docs\/examples\/(\S+\.ts)/.exec(command)?.[1] ?? '';

/** What the test expects of the tool and of the answer, whatever the framework. */
const TOOL_LINE = /^tool testing_calculator: (\{.*\})$/m;
const ANSWER = /^answer: (.*)$/m;

/**
 * Runs `command` as the doc gives it, from the root of the clone, on the Node whose `bin` folder comes
 * first on PATH (the suite's own, or Node 22's). The OpenAI variants get OPENAI_API_KEY and
 * OPENAI_BASE_URL pointing at the model server on loopback; the mock variants get no key at all.
 */
function runExample(command: string, options: { nodeBin?: string; baseURL?: string } = {}): Promise<Run> {
  const env = cleanEnv({ PATH: `${options.nodeBin ?? dirname(process.execPath)}:${cleanEnv().PATH}` });
  for (const key of Object.keys(env)) if (key.startsWith('OPENAI_')) delete env[key];
  if (options.baseURL) Object.assign(env, { OPENAI_API_KEY: 'sk-e2e-loopback', OPENAI_BASE_URL: options.baseURL });
  return runAsync('bash', ['-c', `set -e\n${command}`], WORKSPACE, env);
}

function expectToolAndAnswer(run: Run): void {
  expect(run.status, run.stdout + run.stderr).toBe(0);
  const tool = JSON.parse(TOOL_LINE.exec(run.stdout)?.[1] ?? 'null') as { value: number; expression: string } | null;
  expect(tool, run.stdout).toMatchObject({ value: 42, expression: '6 * 7 = 42' });
  expect(ANSWER.exec(run.stdout)?.[1], run.stdout).toContain('6 * 7 = 42');
}

describe("docs/frameworks.md's runnable examples, run as the doc says", () => {
  const commands = exampleCommands();
  let server: OpenAiCompatibleServer;
  const runs = new Map<string, { run: Run; calls: ModelCall[] }>();

  beforeAll(async () => {
    server = await startOpenAiCompatibleServer();
    // One at a time, so each run's model calls are its own.
    for (const command of commands) {
      const before = server.calls.length;
      const run = await runExample(command, fileOf(command).endsWith('-openai.ts') ? { baseURL: server.baseURL } : {});
      runs.set(fileOf(command), { run, calls: server.calls.slice(before) });
    }
  });

  afterAll(async () => {
    await server?.close();
  });

  it('every file of docs/examples is linked from the doc and run by one of its commands', () => {
    const files = readdirSync(EXAMPLES).filter((file) => file.endsWith('.ts'));
    expect(files.length).toBe(6);
    expect(commands.map(fileOf).sort()).toEqual([...files].sort());
    for (const file of files) expect(GUIDE, file).toContain(`](examples/${file})`);
    for (const command of commands) expect(command).toMatch(/^npx tsx docs\/examples\/[\w-]+\.ts$/);
  });

  it('the example files type-check against the packages as built (strict, as the repository compiles)', async () => {
    const check = await runAsync('npx', ['tsc', '-p', 'docs/examples'], WORKSPACE, cleanEnv());
    expect(check.status, check.stdout + check.stderr).toBe(0);
  });

  for (const framework of ['ai-sdk', 'langchain', 'openai-agents'])
    describe(framework, () => {
      it("with the framework's mock model: the tool runs through the adapter and its result makes the answer, with no model server called", () => {
        const { run, calls } = runs.get(`${framework}-mock.ts`)!;
        expectToolAndAnswer(run);
        expect(calls).toEqual([]);
      });

      it('with the real provider package against an OpenAI-compatible server on loopback: a tool call, then the final answer', () => {
        const { run, calls } = runs.get(`${framework}-openai.ts`)!;
        expectToolAndAnswer(run);
        expect(calls.map((call) => call.api)).toEqual(
          Array(2).fill(framework === 'langchain' ? 'chat.completions' : 'responses'),
        );
        const [first, second] = calls as [ModelCall, ModelCall];
        expect(first.tools).toContain('testing_calculator');
        expect(first.toolOutput).toBeUndefined();
        // The guidance reached the model in its instructions.
        expect(first.system).toContain('<tool_guidance name="testing_calculator">');
        // What the adapter sent back is the tool's own result, and the answer the example printed is the server's.
        expect(JSON.parse(second.toolOutput!)).toMatchObject({ value: 42, expression: '6 * 7 = 42' });
        expect(ANSWER.exec(run.stdout)?.[1]).toBe(second.answer);
      });
    });

  it('the AI SDK examples run on Node 22 too, the Node ai@7 declares', async () => {
    const nodeBin = dirname(nodeBinary(22));
    const command = (file: string) => commands.find((line) => fileOf(line) === file)!;
    const mock = await runExample(command('ai-sdk-mock.ts'), { nodeBin });
    expectToolAndAnswer(mock);
    const version = await runExample('node --version', { nodeBin });
    expect(version.stdout).toMatch(/^v22\./);
    const before = server.calls.length;
    const real = await runExample(command('ai-sdk-openai.ts'), { nodeBin, baseURL: server.baseURL });
    expectToolAndAnswer(real);
    expect(server.calls.length - before).toBe(2);
  });
});
