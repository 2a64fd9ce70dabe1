// `npm run registry`: every public @aptix package on an npm registry of your own, until they are on the
// public one. Starts Verdaccio on loopback (the same code the end-to-end suite publishes with), publishes
// every public workspace package to it as a release does, prints the one .npmrc line that sends @aptix/*
// there, and keeps serving until Ctrl-C. Everything else still comes from the registry npm is set up with.
// The npm script builds first. Usage: npm run registry [-- --port <port>]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { detect } from 'detect-port';
import { publishWorkspace, startRegistry } from '../e2e/test/registry.js';

/** Verdaccio's usual port, so the .npmrc line stays the same from one start to the next. */
const DEFAULT_PORT = 4873;

/** The line that sends the @aptix scope, and nothing else, to the registry at `url`. */
function npmrcLine(url: string): string {
  return `@aptix:registry=${url}`;
}

const { values } = parseArgs({ options: { port: { type: 'string', default: String(DEFAULT_PORT) } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`--port ${values.port} is not a port. Fix: npm run registry -- --port ${DEFAULT_PORT + 1}`);
  process.exit(2);
}
if ((await detect(port)) !== port) {
  console.error(
    `Port ${port} on 127.0.0.1 is already in use (another npm run registry?). Fix: stop it, or npm run registry -- --port ${port + 1}`,
  );
  process.exit(1);
}

// A new, empty storage each time: the packages are published afresh from this checkout's builds.
const dir = mkdtempSync(join(tmpdir(), 'aptix-registry-'));
const registry = await startRegistry(dir, { port });
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  await registry.stop();
  rmSync(dir, { recursive: true, force: true });
  process.exit(code);
};
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

try {
  const published = await publishWorkspace(registry.url, dir);
  console.log(
    [
      `Published ${published.length} packages to the local registry at ${registry.url}:`,
      ...published.map((pkg) => `  ${pkg.name}@${pkg.version}`),
      '',
      'Add this line to the .npmrc of the project you install in (or to ~/.npmrc):',
      '',
      npmrcLine(registry.url),
      '',
      'Every `npm install @aptix/...` of the docs then works as written; other packages still come from your usual registry.',
      'Serving until Ctrl-C.',
    ].join('\n'),
  );
} catch (error) {
  console.error((error as Error).message);
  await stop(1);
}
