import type { Logger } from 'pino';
import { describeThrown, type AdminLogger, type ToolPackageHost } from '@aptix/tool-contract';
import type { AptixConfig } from './config.js';
import { loadIsolated } from './isolation/isolated-package.js';
import type { LiveTools } from './live-tools.js';
import { UnitFollower } from './live-units.js';
import { loadInProcess, type LoadedToolPackage } from './tool-packages.js';

/** What loading the tool packages reads of the configuration. */
export type ToolPackagesSettings = Pick<
  AptixConfig,
  'toolPackages' | 'baseDir' | 'startupTimeoutMs' | 'maxResultBytes' | 'maxErrorMessageLength'
>;

/**
 * Loads every configured package, in order: in process, or in worker threads for `isolation: "worker"`.
 * A package loaded in process may follow its tools (`toolsChanged`, with `live`) and its prompts and
 * resources (`unitsChanged`; see live-units.ts); one in a worker follows its tools only.
 * Each gets its time limit for its import and for its createDependencies and createTools. An
 * `optional` package that fails is skipped with an error in the log; any other stops start-up.
 */
export async function loadToolPackages(
  config: ToolPackagesSettings,
  logger: Logger,
  adminLogger: AdminLogger,
  live?: LiveTools,
): Promise<LoadedToolPackage[]> {
  const loaded: LoadedToolPackage[] = [];
  try {
    for (const entry of config.toolPackages) {
      const limitMs = entry.startupTimeoutMs ?? config.startupTimeoutMs;
      try {
        if (entry.isolation === 'worker') {
          // Its workers report the package's changed tool lists; the host follows them like any package's.
          const follower = live?.follower();
          const toolPackage = await loadIsolated(
            entry,
            config.baseDir,
            {
              limitMs,
              logger,
              maxResultBytes: config.maxResultBytes,
              maxErrorMessageLength: config.maxErrorMessageLength,
            },
            follower,
          );
          follower?.loaded(toolPackage);
          loaded.push(toolPackage);
          continue;
        }
        const follower = live?.follower();
        const host: ToolPackageHost = { logger: adminLogger, options: entry.options };
        // Only a package that takes toolsChanged can change its tools: the others keep 2026 list caching.
        if (follower !== undefined)
          Object.defineProperty(host, 'toolsChanged', {
            enumerable: true,
            get: () => (follower.watched(), follower.toolsChanged),
          });
        // Prompts and resources alike: a package that takes unitsChanged makes MCP declare listChanged for them.
        const units = new UnitFollower(logger);
        Object.defineProperty(host, 'unitsChanged', { enumerable: true, get: () => units.watch() });
        const toolPackage = await loadInProcess(entry, config.baseDir, host, limitMs);
        follower?.loaded(toolPackage);
        units.loaded(toolPackage);
        loaded.push(toolPackage);
      } catch (error) {
        if (!entry.optional) throw error;
        logger.error({ toolPackage: entry.specifier }, `optional tool package skipped: ${describeFailure(error)}`);
      }
    }
  } catch (error) {
    await Promise.allSettled(loaded.map((toolPackage) => toolPackage.close()));
    throw error;
  }
  return loaded;
}

/** A loading failure's message: the host's own errors carry the whole message; anything else is described safely. */
function describeFailure(error: unknown): string {
  try {
    if (error instanceof Error && typeof error.message === 'string') return error.message;
  } catch {
    // fall through
  }
  return describeThrown(error);
}
