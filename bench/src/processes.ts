/** Child processes the bench starts (the host, the bare baselines), and what it reads of them. */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { detect } from 'detect-port';

export interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  /** Milliseconds from spawn to the line saying it listens. */
  readonly startMs: number;
  stop(): Promise<void>;
}

/** A TCP port nothing listens on right now. */
export const freePort = (): Promise<number> => detect(0);

/**
 * Spawns `node <args>` and waits until a stdout line passes `ready` (which returns the port), or until
 * `readyUrl` answers when the process logs nothing at start (a host at LOG_LEVEL=warn).
 */
export function startServer(
  args: readonly string[],
  options: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    ready?: (line: string) => number | undefined;
    port?: number;
    /** Stdout and stderr go to this file instead (a host logging every request); readiness then needs `port`. */ logFile?: string;
  },
): Promise<Server> {
  const started = performance.now();
  const logFd = options.logFile === undefined ? undefined : openSync(options.logFile, 'a');
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: logFd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', logFd, logFd],
  });
  if (logFd !== undefined) closeSync(logFd);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise<Server>((resolve, reject) => {
    let done = false;
    const ok = (port: number) => {
      if (done) return;
      done = true;
      resolve({ child, url: `http://127.0.0.1:${port}`, startMs: performance.now() - started, stop });
    };
    void exited.then((code) => {
      if (!done) {
        done = true;
        const output = options.logFile === undefined ? stderr : readFileSync(options.logFile, 'utf8').slice(-4000);
        reject(new Error(`${args.join(' ')} exited with ${code} before it was ready:\n${output}`));
      }
    });
    if (child.stdout) {
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        const port = options.ready?.(line);
        if (port !== undefined) ok(port);
      });
    }
    if (options.port !== undefined) {
      const port = options.port;
      const poll = async () => {
        while (!done) {
          try {
            const response = await fetch(`http://127.0.0.1:${port}/healthz`);
            if (response.ok) return ok(port);
          } catch {
            // not listening yet
          }
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      void poll();
    }
  });
}

/** The `{"port":n}` line of the bare server. */
export function portLine(line: string): number | undefined {
  try {
    const parsed = JSON.parse(line) as { port?: unknown };
    return typeof parsed.port === 'number' ? parsed.port : undefined;
  } catch {
    return undefined;
  }
}

/** The host's "Aptix listening on …" log line (LOG_LEVEL=info). */
export function listeningLine(line: string): number | undefined {
  try {
    const parsed = JSON.parse(line) as { msg?: unknown; url?: unknown };
    return typeof parsed.msg === 'string' && parsed.msg.startsWith('Aptix listening') && typeof parsed.url === 'string'
      ? Number(new URL(parsed.url).port)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Resident set size of a process, in MiB (Linux; undefined elsewhere). */
export function rssMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A process's CPU time so far in µs, from /proc (Linux); undefined elsewhere. */
export function cpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}
