import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { detect } from 'detect-port';
import { WORKSPACE, type Run } from './support.js';

/** A public package of this workspace, as `npm query .workspace` describes it. */
export interface WorkspacePackage {
  readonly name: string;
  readonly version: string;
  readonly path: string;
}

/** A Verdaccio registry on loopback, with the workspace's public packages published to it. */
export interface LocalRegistry {
  readonly url: string;
  /** What was published, by name. */
  readonly published: readonly WorkspacePackage[];
  stop(): Promise<void>;
}

/** The environment npm gives the scripts it runs (npm_config_*, npm_package_*, node_modules/.bin on PATH), taken off. */
export function cleanEnv(overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) || key === 'INIT_CWD' || key === 'NODE' || /^(NX_|VITEST|TEST$)/.test(key)) continue;
    env[key] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => !dir.includes('node_modules'))
    .join(':');
  return { ...env, ...overrides };
}

/** The public (not private) packages of the workspace. */
export function publicPackages(): WorkspacePackage[] {
  const result = spawnSync('npm', ['query', '.workspace'], {
    cwd: WORKSPACE,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`npm query .workspace failed: ${result.stderr}`);
  const all = JSON.parse(result.stdout) as Array<{ name: string; version: string; private?: boolean; path: string }>;
  return all.filter((pkg) => pkg.private !== true).map(({ name, version, path }) => ({ name, version, path }));
}

/** A TCP port free on loopback now. */
export const freePort = (): Promise<number> => detect(0);

/**
 * Starts Verdaccio on loopback (on `port`, else a free one) with its storage under `dir`: `@aptix/*`
 * local only (never looked up upstream, so a missing package is a 404 here, not a download),
 * everything else proxied to the registry npm is configured with on this machine, read at run time.
 * `npm run registry` (scripts/registry.ts) starts it too.
 */
export async function startRegistry(
  dir: string,
  options: { port?: number } = {},
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const uplink = spawnSync('npm', ['config', 'get', 'registry'], {
    cwd: dir,
    encoding: 'utf8',
    env: cleanEnv(),
  }).stdout.trim();
  if (!/^https?:\/\//.test(uplink))
    throw new Error(`npm config get registry gave ${JSON.stringify(uplink)}, not a URL`);
  const port = options.port ?? (await freePort());
  const config = join(dir, 'verdaccio.yaml');
  writeFileSync(
    config,
    [
      `storage: ${JSON.stringify(join(dir, 'storage'))}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(join(dir, 'htpasswd'))}`,
      '    max_users: 10',
      'uplinks:',
      '  upstream:',
      `    url: ${JSON.stringify(uplink)}`,
      '    timeout: 60s',
      'packages:',
      "  '@aptix/*':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      '    proxy: upstream',
      'log: { type: stdout, format: pretty, level: warn }',
      'max_body_size: 200mb',
      '',
    ].join('\n'),
  );
  const bin = join(WORKSPACE, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
  const child = spawn(process.execPath, [bin, '--config', config, '--listen', `127.0.0.1:${port}`], {
    cwd: dir,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}/`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`Verdaccio exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${url}-/ping`)).ok) break;
    } catch {
      // not listening yet
    }
    if (attempt > 600) throw new Error(`Verdaccio did not answer on ${url}:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `npm run registry` of this workspace, running: the .npmrc line it printed, the registry's URL and what it published. */
export interface RegistryScript {
  readonly line: string;
  readonly url: string;
  readonly published: readonly WorkspacePackage[];
  readonly output: string;
  /** Ctrl-C: SIGINT to the script's process group, as a terminal sends it. */
  stop(): Promise<void>;
}

/**
 * Runs `npm run registry -- --port <port>` in the workspace as a newcomer does, and waits until it
 * prints its .npmrc line (it builds every package first: cache hits after the suite's own build).
 */
export async function runRegistryScript(port: number): Promise<RegistryScript> {
  const child = spawn('npm', ['run', 'registry', '--', '--port', String(port)], {
    cwd: WORKSPACE,
    env: cleanEnv({ NX_DAEMON: 'false', NX_TUI: 'false' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    const look = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /^@aptix:registry=\S+$/m.exec(output)?.[0];
      if (found) resolve(found);
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) =>
      reject(new Error(`npm run registry exited with ${code} before printing its .npmrc line:\n${output}`)),
    );
  });
  const published = [...output.matchAll(/^ {2}(@aptix\/[^@\s]+)@(\S+)$/gm)].map(([, name, version]) => ({
    name: name!,
    version: version!,
    path: '',
  }));
  return {
    line,
    url: line.slice('@aptix:registry='.length),
    published,
    get output() {
      return output;
    },
    async stop() {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGINT');
      await exited;
    },
  };
}

/** Adds a user to the registry and returns its token, as `npm adduser` would. */
async function addUser(url: string): Promise<string> {
  const response = await fetch(`${url}-/user/org.couchdb.user:aptix-release`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'aptix-release', password: 'aptix-release-password', type: 'user', roles: [] }),
  });
  const body = (await response.json()) as { token?: string };
  if (!response.ok || !body.token)
    throw new Error(`Could not add a user to ${url}: ${response.status} ${JSON.stringify(body)}`);
  return body.token;
}

/**
 * Publishes every public package of the workspace to the registry as a release does: `npm publish`
 * of each built package (npm packs exactly what its `files` say). Fails when a package is not built.
 */
export async function publishWorkspace(url: string, dir: string): Promise<WorkspacePackage[]> {
  const packages = publicPackages();
  const userconfig = join(dir, 'publish.npmrc');
  const host = url.replace(/^https?:/, '');
  writeFileSync(userconfig, `registry=${url}\n${host}:_authToken=${await addUser(url)}\n`);
  for (const pkg of packages) {
    const dir = join(WORKSPACE, pkg.path.slice(WORKSPACE.length));
    const manifest = JSON.parse(readFileSync(join(pkg.path, 'package.json'), 'utf8')) as { main?: string };
    if (manifest.main?.startsWith('./dist/') && !existsSync(join(pkg.path, manifest.main)))
      throw new Error(`${pkg.name} is not built (${manifest.main} is missing): run npx nx run-many -t build first.`);
    const result = spawnSync('npm', ['publish', '--registry', url, '--access', 'public', '--tag', 'latest'], {
      cwd: dir,
      encoding: 'utf8',
      env: cleanEnv({ npm_config_userconfig: userconfig }),
    });
    if (result.status !== 0) throw new Error(`npm publish of ${pkg.name} failed:\n${result.stdout}\n${result.stderr}`);
  }
  return packages;
}

/** Runs a command to completion without blocking the event loop, so several flows can run side by side. */
export function runAsync(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The environment without unset entries, as the MCP SDK's stdio transport takes it. */
export function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** Waits until `url` answers 2xx (a server this test started), for at most two minutes. */
export async function waitForHttp(url: string): Promise<void> {
  for (let attempt = 0; attempt < 480; attempt++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Nothing answered at ${url}`);
}
