import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const APTIX = join(REPO, 'apps', 'host', 'bin', 'aptix.js');
/** Screenshots of the views, kept as test artefacts (not committed). */
export const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));

/** Debian's Chromium (`apt-get install chromium`); CHROMIUM_PATH overrides. Playwright's own download cannot work here. */
export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
    (path): path is string => Boolean(path),
  );
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) {
    if (process.env.CI === 'true')
      throw new Error(
        'Chromium is not installed, and CI=true requires the console tests: apt-get install -y chromium, or set CHROMIUM_PATH.',
      );
    console.warn(
      '\n!!! Chromium not found (apt-get install -y chromium, or set CHROMIUM_PATH): the console browser tests are SKIPPED. !!!\n',
    );
  }
  return found;
}

/** Headless Chromium with the flags this closed network needs (no background connections). */
export function launch(executablePath: string): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface Host {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** A real `aptix serve` on a free port, with its own SQLite file and the given environment. */
export async function serve(env: NodeJS.ProcessEnv = {}): Promise<Host> {
  const dir = mkdtempSync(join(tmpdir(), 'aptix-console-'));
  const child = spawn(process.execPath, [APTIX, 'serve', '--port', '0'], {
    cwd: dir,
    env: { ...process.env, LOG_LEVEL: 'info', APTIX_DB: `sqlite:${join(dir, 'aptix.db')}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /"url":"([^"]+)".*Aptix listening/.exec(line);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`aptix serve exited with ${code}:\n${stderr}`)));
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether the host's build (bin/aptix.js imports dist/) and the console's are there. */
export function built(): boolean {
  return (
    existsSync(join(REPO, 'apps', 'host', 'dist', 'index.js')) &&
    existsSync(join(REPO, 'apps', 'console', 'dist', 'index.html'))
  );
}
