import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const BENCH_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const WORKSPACE_ROOT = join(BENCH_ROOT, '..');
/** The host's committed launcher: runs the built `dist/`, exactly as `npx aptix` does. */
export const APTIX_BIN = join(WORKSPACE_ROOT, 'apps', 'host', 'bin', 'aptix.js');
export const MANY_TOOLS = join(BENCH_ROOT, 'fixtures', 'many-tools.js');
export const BARE_SERVER = join(BENCH_ROOT, 'fixtures', 'bare-server.js');
/** testing_ping_pong's twin with a dynamic approval policy that says "not needed" (issue 21). */
export const GATED_PACKAGE = join(BENCH_ROOT, 'fixtures', 'gated-ping-pong.js');
export const FIRST_PARTY_PACKAGES = [
  '@aptix/tool-samples',
  '@aptix/tool-mode-catalog',
  '@aptix/tool-mode-change',
] as const;
