import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outsideWorkspace, run, WORKSPACE, type Run } from './support.js';

/** The packages a third party installs from npm; here, from tarballs packed from this workspace. */
const PUBLISHED = ['packages/tool-contract', 'packages/agent-sessions', 'packages/tools/samples', 'packages/tools/mode-catalog', 'packages/tools/mode-change', 'packages/reasoner', 'apps/host'];

/** One step of the guide: a shell block to run, or a file to write. */
type Step = { kind: 'sh'; script: string; id?: string; fails: boolean } | { kind: 'file'; path: string; content: string };

/** Reads the guide's steps: ```sh e2e blocks and ```lang file=path blocks, in order. */
function guideSteps(markdown: string): Step[] {
  const steps: Step[] = [];
  for (const match of markdown.matchAll(/```(\w+)([^\n]*)\n([\s\S]*?)```/g)) {
    const [, lang, info, body] = match as unknown as [string, string, string, string];
    const file = /\bfile=(\S+)/.exec(info)?.[1];
    if (file) steps.push({ kind: 'file', path: file, content: body });
    else if (lang === 'sh' && /\be2e\b/.test(info)) {
      const id = /\bid=(\S+)/.exec(info)?.[1];
      steps.push({ kind: 'sh', script: body, ...(id ? { id } : {}), fails: /\bfails\b/.test(info) });
    }
  }
  return steps;
}

/**
 * An `npm` that installs `@aptix/*` from the packed tarballs instead of the registry (they are not
 * published from here), and passes everything else to the real npm.
 */
function npmShim(dir: string, tarballs: Record<string, string>): string {
  const realNpm = run('bash', ['-lc', 'command -v npm'], WORKSPACE).stdout.trim();
  const all = Object.values(tarballs);
  const script = `#!/usr/bin/env node
const { spawnSync } = require('node:child_process');
const tarballs = ${JSON.stringify(tarballs)};
let args = process.argv.slice(2);
if (args[0] === 'install' || args[0] === 'i') {
  const wanted = args.filter((a) => a in tarballs);
  if (wanted.length > 0) {
    // Internal dependencies (^0.1.0) are satisfied by the tarballs installed alongside.
    args = [...args.map((a) => tarballs[a] ?? a), ...${JSON.stringify(all)}.filter((t) => !args.includes(t))];
  }
}
const result = spawnSync(${JSON.stringify(realNpm)}, args, { stdio: 'inherit' });
process.exit(result.status ?? 1);
`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'npm'), script);
  chmodSync(join(dir, 'npm'), 0o755);
  return dir;
}

describe('a third party writes a tool package and hosts it, following docs/tool-packages.md', () => {
  const scratch = outsideWorkspace('aptix-third-party-');
  const outputs = new Map<string, Run>();
  let tarballs: Record<string, string>;

  beforeAll(() => {
    const packed = join(scratch, 'tarballs');
    mkdirSync(packed);
    tarballs = {};
    for (const path of PUBLISHED) {
      const result = run('npm', ['pack', '--json', '--pack-destination', packed], join(WORKSPACE, path));
      const [info] = JSON.parse(result.stdout) as Array<{ name: string; filename: string }>;
      tarballs[info!.name] = join(packed, info!.filename);
    }
    const shims = npmShim(join(scratch, 'bin'), tarballs);
    const env = { PATH: `${shims}:${process.env.PATH}`, LOG_LEVEL: 'warn', APTIX_DB: `sqlite:${join(scratch, 'aptix.db')}`, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

    // Run the guide: each shell block in the folder the previous one left, each file written there.
    const work = join(scratch, 'work');
    mkdirSync(work);
    let cwd = work;
    for (const step of guideSteps(readFileSync(join(WORKSPACE, 'docs', 'tool-packages.md'), 'utf8'))) {
      if (step.kind === 'file') {
        mkdirSync(dirname(join(cwd, step.path)), { recursive: true });
        writeFileSync(join(cwd, step.path), step.content);
        continue;
      }
      const marker = '__APTIX_CWD__';
      const result = run('bash', ['-c', `set -e\n${step.script}\necho ${marker}"$PWD"`], cwd, { env, expectOk: !step.fails });
      if (step.fails) {
        outputs.set(step.id ?? 'failed', result);
        continue;
      }
      const lines = result.stdout.trimEnd().split('\n');
      cwd = lines.pop()!.slice(marker.length);
      if (step.id) outputs.set(step.id, { ...result, stdout: lines.join('\n') });
    }
  }, 900_000);

  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('packs every publishable package', () => {
    expect(Object.keys(tarballs).sort()).toEqual(['@aptix/agent-sessions', '@aptix/host', '@aptix/reasoner', '@aptix/tool-contract', '@aptix/tool-mode-catalog', '@aptix/tool-mode-change', '@aptix/tool-samples']);
  });

  it('the new package compiled, passed the contract kit and committed its schema snapshot', () => {
    const built = readdirSync(join(scratch, 'work', 'acme-weather', 'dist'));
    expect(built).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'convert-temperature.tool.js']));
    const snapshot = JSON.parse(readFileSync(join(scratch, 'work', 'acme-weather', 'tool-schemas.json'), 'utf8')) as unknown;
    expect(JSON.stringify(snapshot)).toContain('acme_convert_temperature');
  });

  it('aptix tools list offers the new tool next to the first-party ones', () => {
    const { tools } = JSON.parse(outputs.get('list')!.stdout) as { tools: Array<{ name: string; strict: boolean }> };
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['agent_hello_world', 'agent_change_mode', 'acme_convert_temperature']));
    expect(tools.find((t) => t.name === 'acme_convert_temperature')!.strict).toBe(true);
  });

  it('aptix tools call runs it', () => {
    expect(JSON.parse(outputs.get('call')!.stdout)).toEqual({ successful: true, result: { value: 212, unit: 'fahrenheit', sessionId: null, conversationId: null }, errors: [] });
  });

  it('a malformed third-party tool stops aptix check with a clear message', () => {
    const broken = outputs.get('broken')!;
    expect(broken.status).toBe(1);
    expect(broken.stderr).toContain('Tool package "broken-tools" has a tool that breaks the contract (TOOL_NAME_INVALID)');
    expect(broken.stderr).toContain('"acme_weather"');
  });
});
