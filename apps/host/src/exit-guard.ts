/**
 * Keeps a tool package's code from ending the process it shares with the host (or the worker thread it
 * runs in): `process.exit`, `process.reallyExit`, `process.abort`, and `process.kill` / `process._kill`
 * aimed at the host's own process are replaced by functions that refuse, throwing a ToolRefusal
 * (PROCESS_EXIT_REFUSED) into the code that asked. The host ends the process through
 * {@link ExitGuard.exit} only, which puts Node's own functions back first.
 *
 * What this cannot stop (docs/hosting.md, "What start-up checks"): a native addon, a child process
 * that signals the host (`child_process.execSync('kill -9 …')`), a worker thread the package starts
 * itself (its `process` is its own), V8 flags set at run time, and code that removes the host's own
 * listeners. In process, the host trusts a package that far; run one
 * you do not trust as its own process.
 */
import { syncBuiltinESMExports } from 'node:module';
import { ExecutionErrorCode, ToolRefusal } from '@aptix/tool-contract';

/** A refused attempt: what was called, and the stack of the code that called it (for attribution). */
export interface RefusedExit {
  readonly call: string;
  readonly stack: string | undefined;
}

export interface ExitGuard {
  /** Ends the process with `code`: the host's own way out. */
  exit(code: number): never;
  /** Puts Node's functions back (tests, or an embedding host that stops guarding). */
  uninstall(): void;
}

type Guarded = 'exit' | 'reallyExit' | 'abort' | 'kill' | '_kill';
const GUARDED: readonly Guarded[] = ['exit', 'reallyExit', 'abort', 'kill', '_kill'];

// Taken before any package loads: a package that replaces these later cannot blind the guard.
const captureStackTrace = Error.captureStackTrace;
const describeProperty = Object.getOwnPropertyDescriptor;
const defineProperty = Object.defineProperty;

/**
 * The stack of the code that called `refuser`, in Node's own format, whatever the package did to
 * `Error.prepareStackTrace` or `Error.stackTraceLimit`.
 */
function stackOfCaller(refuser: (...args: never[]) => unknown): string | undefined {
  const prepare = describeProperty(Error, 'prepareStackTrace');
  const limit = describeProperty(Error, 'stackTraceLimit');
  try {
    defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: true, configurable: true });
    defineProperty(Error, 'stackTraceLimit', { value: 40, writable: true, configurable: true });
    const holder: { stack?: unknown } = {};
    captureStackTrace(holder, refuser);
    return typeof holder.stack === 'string' ? holder.stack : undefined;
  } catch {
    return undefined;
  } finally {
    try {
      if (prepare === undefined) delete (Error as { prepareStackTrace?: unknown }).prepareStackTrace;
      else defineProperty(Error, 'prepareStackTrace', prepare);
      if (limit !== undefined) defineProperty(Error, 'stackTraceLimit', limit);
    } catch {
      // A property the package made unconfigurable stays as it made it.
    }
  }
}

/** Whether `process.kill(pid)` would signal this process: its pid, its group (0, -pid) or every process (-1). */
function targetsSelf(pid: unknown): boolean {
  const n = Number(pid);
  return n === process.pid || n === 0 || n === -1 || n === -process.pid;
}

/** Signal 0 only checks that a process exists: harmless. */
function isProbe(signal: unknown): boolean {
  return signal === 0;
}

/**
 * Installs the guard on this thread's `process`. `onRefused` hears of each refusal (never throws into
 * the package: its failures are swallowed).
 */
export function guardExits(onRefused: (refused: RefusedExit) => void): ExitGuard {
  const target = process as unknown as Record<Guarded, (...args: unknown[]) => unknown>;
  const originals = new Map<Guarded, PropertyDescriptor | undefined>(
    GUARDED.map((key) => [key, describeProperty(process, key)]),
  );
  const refuse = (call: string, refuser: (...args: never[]) => unknown): never => {
    const stack = stackOfCaller(refuser);
    try {
      onRefused({ call, stack });
    } catch {
      // Reporting must not change what the package sees.
    }
    throw new ToolRefusal(
      ExecutionErrorCode.PROCESS_EXIT_REFUSED,
      `it called ${call}, which would end the host process, and the host refused it. A tool reports a failure by returning or throwing an error, never by ending the process.`,
    );
  };
  const kill = target.kill;
  const rawKill = target._kill;
  const replacements: Record<Guarded, (...args: unknown[]) => unknown> = {
    exit: function exit(code?: unknown) {
      return refuse(`process.exit(${code === undefined ? '' : String(code)})`, exit);
    },
    reallyExit: function reallyExit(code?: unknown) {
      return refuse(`process.reallyExit(${code === undefined ? '' : String(code)})`, reallyExit);
    },
    abort: function abort() {
      return refuse('process.abort()', abort);
    },
    kill: function guardedKill(pid: unknown, signal?: unknown) {
      if (targetsSelf(pid) && !isProbe(signal))
        return refuse(`process.kill(${String(pid)}${signal === undefined ? '' : `, ${String(signal)}`})`, guardedKill);
      return kill.call(process, pid, signal);
    },
    _kill: function guardedRawKill(pid: unknown, signal?: unknown) {
      if (targetsSelf(pid) && !isProbe(signal))
        return refuse(`process._kill(${String(pid)}, ${String(signal)})`, guardedRawKill);
      return rawKill.call(process, pid, signal);
    },
  };
  for (const key of GUARDED)
    if (originals.get(key) !== undefined)
      defineProperty(process, key, { value: replacements[key], writable: true, enumerable: true, configurable: true });
  // `import { exit } from 'node:process'` reads a copy of the exports taken when the module was made:
  // brought up to date, so a package importing it by name gets the guard too.
  syncBuiltinESMExports();
  const uninstall = () => {
    for (const [key, descriptor] of originals) if (descriptor !== undefined) defineProperty(process, key, descriptor);
    syncBuiltinESMExports();
  };
  const exit = originals.get('exit')?.value as (code: number) => never;
  return {
    exit(code) {
      // Node's exit calls process.reallyExit when it ends: every original goes back first.
      uninstall();
      return exit.call(process, code);
    },
    uninstall,
  };
}
