import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * One vitest base for every project. Workspace packages resolve to their TypeScript
 * sources through the `@aptix/source` export condition, so tests never wait for a build.
 */
export const sharedConfig = defineConfig({
  resolve: { conditions: ['@aptix/source', 'module', 'node', 'development|production'] },
  // Vitest hands these to Node (--conditions) for the packages it does not transform, so no `module`:
  // Node then loads each package as Node would. (OpenTelemetry's `module` builds import their files
  // without extensions, which Node's loader refuses.)
  ssr: { resolve: { conditions: ['@aptix/source', 'node', 'development|production'] } },
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Child processes get the test's environment, never the shell's APTIX_* and OPENAI_* (see vitest.env.ts).
    setupFiles: [fileURLToPath(new URL('./vitest.env.ts', import.meta.url))],
  },
});
