import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { describeThrown } from '@aptix/tool-contract';
import type { LoadedToolPackage } from './tool-packages.js';

/** Which package (and tool, when a frame names its class) an escaped error came from. */
export interface Attribution {
  readonly toolPackage?: string;
  readonly tool?: string;
}

/**
 * Names the package whose code threw, from the file paths in the error's stack frames (the first frame
 * inside a loaded package's folder), and the tool when such a frame names one of its tool classes
 * (`at WeatherTool.run`). Best effort: an error thrown from a timer set by a tool often carries only the
 * timer's frame, and a value that is not an Error carries no stack at all.
 */
export function attribute(error: unknown, packages: readonly LoadedToolPackage[]): Attribution {
  let stack: unknown;
  try {
    stack = (error as { stack?: unknown } | null)?.stack;
  } catch {
    return {};
  }
  if (typeof stack !== 'string') return {};
  const folders = packages
    .filter((p) => p.isolation === 'none')
    .map((p) => ({ p, folder: p.folder.endsWith(sep) ? p.folder : p.folder + sep }))
    // The deepest folder first: a package inside another's node_modules is its own.
    .sort((a, b) => b.folder.length - a.folder.length);
  for (const line of stack.split('\n').slice(1, 40)) {
    const match = /\(?((?:file:\/\/)?\/[^\s()]+?):\d+:\d+\)?\s*$/.exec(line);
    if (!match) continue;
    let path = match[1]!;
    if (path.startsWith('file://')) {
      try {
        path = fileURLToPath(path);
      } catch {
        continue;
      }
    }
    if (path.includes(`${sep}node_modules${sep}`) && !folders.some(({ folder }) => path.startsWith(folder))) continue;
    const owner = folders.find(({ folder }) => path.startsWith(folder));
    if (owner === undefined) continue;
    const caller = /^\s*at (?:async )?([\w$]+)\./.exec(line)?.[1];
    const tool = caller === undefined ? undefined : owner.p.tools.find((t) => t.name === caller)?.ToolName;
    return tool === undefined ? { toolPackage: owner.p.name } : { toolPackage: owner.p.name, tool };
  }
  return {};
}

/** The host process's handlers; `attach` gives them the logger and the packages once the host is composed. */
export interface Containment {
  attach(logger: Logger, packages: readonly LoadedToolPackage[]): void;
  /** Removes the handlers (tests, or an embedding host that has its own). */
  uninstall(): void;
  /** How many escaped errors were contained. */
  readonly contained: number;
}

/**
 * Installs `uncaughtException` and `unhandledRejection` handlers on the host process: an exception or a
 * rejection that escapes a tool's call stack (an unawaited promise, a throw in a timer) is logged, with
 * the package and tool when they can be told, and the host keeps serving every other call and session.
 * Only the host's `serve` and `mcp` commands install them; library code never does.
 */
export function installContainment(): Containment {
  let logger: Logger | undefined;
  let packages: readonly LoadedToolPackage[] = [];
  let contained = 0;
  const report = (kind: 'uncaughtException' | 'unhandledRejection', error: unknown) => {
    contained++;
    try {
      const who = attribute(error, packages);
      const where = who.tool ? `tool "${who.tool}" of package "${who.toolPackage}"` : who.toolPackage ? `package "${who.toolPackage}"` : 'code the host cannot attribute';
      const message = `contained ${kind === 'uncaughtException' ? 'an uncaught exception' : 'an unhandled promise rejection'} from ${where}: ${describeThrown(error)}. The host keeps serving; fix the code that let it escape (await every promise, catch inside timers).`;
      const fields = { event: kind, ...who };
      if (logger) logger.error(fields, message);
      else process.stderr.write(`${JSON.stringify({ level: 50, ...fields, msg: message })}\n`);
    } catch {
      // Reporting must never throw from the handler: that would end the process.
    }
  };
  const onException = (error: unknown) => report('uncaughtException', error);
  const onRejection = (reason: unknown) => report('unhandledRejection', reason);
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return {
    attach(to, loaded) {
      logger = to;
      packages = loaded;
    },
    uninstall() {
      process.off('uncaughtException', onException);
      process.off('unhandledRejection', onRejection);
    },
    get contained() {
      return contained;
    },
  };
}
