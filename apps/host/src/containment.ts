import { readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { describeThrown, ToolRefusal } from '@aptix/tool-contract';
import { guardExits, type RefusedExit } from './exit-guard.js';
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
  for (const { line, path } of frames(stack)) {
    if (path.includes(`${sep}node_modules${sep}`) && !folders.some(({ folder }) => path.startsWith(folder))) continue;
    const owner = folders.find(({ folder }) => path.startsWith(folder));
    if (owner === undefined) continue;
    const caller = /^\s*at (?:async )?([\w$]+)\./.exec(line)?.[1];
    const tool = caller === undefined ? undefined : owner.p.tools.find((t) => t.name === caller)?.ToolName;
    return tool === undefined ? { toolPackage: owner.p.name } : { toolPackage: owner.p.name, tool };
  }
  return {};
}

/** The file path of each stack frame that has one, in order. */
function* frames(stack: string): Generator<{ line: string; path: string }> {
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
    yield { line, path };
  }
}

/** The host's own built code: frames there are the host's, not a package's. */
const HOST_CODE = dirname(fileURLToPath(import.meta.url)) + sep;

/**
 * The package of the first frame that is not the host's own code, by the nearest package.json with a
 * name: attributes code of a package the host has not finished loading (its import, its createTools).
 */
export function nearestPackage(stack: string | undefined): string | undefined {
  if (stack === undefined) return undefined;
  for (const { path } of frames(stack)) {
    if (path.startsWith(HOST_CODE)) continue;
    for (let dir = dirname(path); dirname(dir) !== dir; dir = dirname(dir)) {
      try {
        const name = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name;
        if (typeof name === 'string' && name !== '') return name;
      } catch {
        // keep walking up
      }
    }
    return undefined;
  }
  return undefined;
}

/** The host process's handlers; `attach` gives them the logger and the packages once the host is composed. */
export interface Containment {
  attach(logger: Logger, packages: readonly LoadedToolPackage[]): void;
  /** Ends the process with `code`: the host's own way out, since the guard refuses `process.exit` to everyone else. */
  exit(code: number): never;
  /** Removes the handlers and the guard (tests, or an embedding host that has its own). */
  uninstall(): void;
  /** How many escaped errors were contained. */
  readonly contained: number;
}

/** Where something came from, for a log line. */
function describeSource(who: Attribution): string {
  return who.tool
    ? `tool "${who.tool}" of package "${who.toolPackage}"`
    : who.toolPackage
      ? `package "${who.toolPackage}"`
      : 'code the host cannot attribute';
}

function isRefusal(error: unknown): boolean {
  try {
    return error instanceof ToolRefusal;
  } catch {
    return false;
  }
}

/**
 * Installs, on the host process, the exit guard (see exit-guard.ts: a package's `process.exit`,
 * `process.abort`, `process.reallyExit` or `process.kill` of the host is refused and logged, naming the
 * package) and, unless `escapes` is false, `uncaughtException` and `unhandledRejection` handlers: an
 * exception or a rejection that escapes a tool's call stack (an unawaited promise, a throw in a timer)
 * is logged, with the package and tool when they can be told, and the host keeps serving every other
 * call and session. Only the host's commands install them; library code never does.
 */
export function installContainment(options: { escapes?: boolean } = {}): Containment {
  let logger: Logger | undefined;
  let packages: readonly LoadedToolPackage[] = [];
  let contained = 0;
  const log = (fields: Record<string, unknown>, message: string) => {
    if (logger) logger.error(fields, message);
    else process.stderr.write(`${JSON.stringify({ level: 50, ...fields, msg: message })}\n`);
  };
  const report = (kind: 'uncaughtException' | 'unhandledRejection', error: unknown) => {
    contained++;
    // A refused exit thrown where nothing catches it (a timer) was logged when it was refused.
    if (isRefusal(error)) return;
    try {
      const who = attribute(error, packages);
      const message =
        `contained ${kind === 'uncaughtException' ? 'an uncaught exception' : 'an unhandled promise rejection'} ` +
        `from ${describeSource(who)}: ${describeThrown(error)}. The host keeps serving; fix the ` +
        `code that let it escape (await every promise, catch inside timers).`;
      log({ event: kind, ...who }, message);
    } catch {
      // Reporting must never throw from the handler: that would end the process.
    }
  };
  const refused = ({ call, stack }: RefusedExit) => {
    const attributed = attribute({ stack }, packages);
    const nearest = attributed.toolPackage === undefined ? nearestPackage(stack) : undefined;
    const who: Attribution = nearest === undefined ? attributed : { toolPackage: nearest };
    const where =
      who.toolPackage === undefined
        ? 'code the host cannot attribute (an exit passed as a bare callback, such as setTimeout(process.exit), carries no frame of its package)'
        : describeSource(who);
    log(
      { event: 'exitRefused', call, ...who },
      `refused ${call} from ${where}: only the host ends its process. The code that called it ` +
        `got a PROCESS_EXIT_REFUSED error (a tool call fails with that code) and the host keeps ` +
        `serving; fix the package to return or throw an error instead.`,
    );
  };
  const guard = guardExits(refused);
  const onException = (error: unknown) => report('uncaughtException', error);
  const onRejection = (reason: unknown) => report('unhandledRejection', reason);
  if (options.escapes !== false) {
    process.on('uncaughtException', onException);
    process.on('unhandledRejection', onRejection);
  }
  return {
    attach(to, loaded) {
      logger = to;
      packages = loaded;
    },
    exit: (code) => guard.exit(code),
    uninstall() {
      guard.uninstall();
      process.off('uncaughtException', onException);
      process.off('unhandledRejection', onRejection);
    },
    get contained() {
      return contained;
    },
  };
}
