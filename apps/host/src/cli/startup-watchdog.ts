import { Worker } from 'node:worker_threads';

/** How often the main thread says it is alive while the watchdog runs. */
const BEAT_MS = 200;

/**
 * The watchdog's thread: it waits on the beat the main thread bumps, and when the beat has not moved for
 * `stallMs` the main thread is held by synchronous code (a package whose import never returns, which no
 * time limit and no signal handler can interrupt there): it says so on stderr and ends the process with
 * SIGKILL, the one way out a thread has that does not need the blocked one.
 */
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const cells = new Int32Array(workerData.shared);
let seen = Atomics.load(cells, 0);
let still = 0;
for (;;) {
  Atomics.wait(cells, 1, 0, ${BEAT_MS});
  if (Atomics.load(cells, 1) !== 0) break;
  const beat = Atomics.load(cells, 0);
  if (beat !== seen) { seen = beat; still = 0; continue; }
  still += ${BEAT_MS};
  if (still < workerData.stallMs) continue;
  try {
    writeSync(2, 'aptix: start-up has been stuck in synchronous code for ' + still + ' ms (a tool package\\'s import or setup that never returns; no time limit or signal can interrupt it there): killing the process. Fix the package, or load it with isolation "worker", where its time limit ends it.\\n');
  } finally {
    process.kill(process.pid, 'SIGKILL');
  }
}
`;

export interface StartupWatchdog {
  /** Start-up is over (served, or ended): the watchdog's thread ends. */
  stop(): void;
}

/**
 * Watches the main thread while tool packages load: if its event loop does not turn for `stallMs`, the
 * process is killed (see {@link WATCHDOG}). Costs a small thread for the length of start-up only.
 */
export function watchStartup(stallMs: number): StartupWatchdog {
  const shared = new SharedArrayBuffer(8);
  const cells = new Int32Array(shared);
  const worker = new Worker(WATCHDOG, {
    eval: true,
    workerData: { shared, stallMs },
    stdout: false,
    stderr: false,
    resourceLimits: { maxOldGenerationSizeMb: 16 },
  });
  worker.unref();
  const beat = setInterval(() => Atomics.add(cells, 0, 1), BEAT_MS);
  beat.unref();
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(beat);
      Atomics.store(cells, 1, 1);
      Atomics.notify(cells, 1);
    },
  };
}
