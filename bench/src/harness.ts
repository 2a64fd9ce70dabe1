/**
 * Timing helpers. Two cores are shared with everything else on the machine, so every comparison runs
 * its candidates interleaved, round after round, and keeps the median round: a burst of load elsewhere
 * then hits both sides of a ratio alike instead of skewing it.
 */

/** Work to time: `run(n)` performs the operation `n` times (a loop inside, so the call itself costs nothing). */
export interface Subject {
  readonly name: string;
  run(n: number): unknown;
}

export interface Timing {
  readonly name: string;
  /** Median over the rounds, operations per second. */
  readonly opsPerSec: number;
  /** Median nanoseconds per operation. */
  readonly nsPerOp: number;
}

const now = () => process.hrtime.bigint();

async function timeOnce(subject: Subject, n: number): Promise<number> {
  const start = now();
  const out = subject.run(n);
  if (out instanceof Promise) await out;
  return Number(now() - start);
}

/** How many operations take about `targetMs`, found by doubling. */
async function calibrate(subject: Subject, targetMs: number): Promise<number> {
  let n = 1;
  for (;;) {
    const ns = await timeOnce(subject, n);
    if (ns > (targetMs * 1e6) / 4 || n >= 1 << 26)
      return Math.max(1, Math.round((n * targetMs * 1e6) / Math.max(ns, 1)));
    n *= 2;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Times every subject in interleaved rounds (`rounds` of about `roundMs` each, after a warm-up that lets
 * the JIT settle) and returns the median of each.
 */
export async function compare(
  subjects: readonly Subject[],
  options: { rounds?: number; roundMs?: number } = {},
): Promise<Timing[]> {
  const rounds = options.rounds ?? 9;
  const roundMs = options.roundMs ?? 60;
  const sizes: number[] = [];
  for (const subject of subjects) {
    await timeOnce(subject, 1000); // warm-up, so calibration does not measure the interpreter
    sizes.push(await calibrate(subject, roundMs));
  }
  const samples: number[][] = subjects.map(() => []);
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round so no subject always runs right after the same one (GC debt).
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + round) % subjects.length;
      samples[i]!.push((await timeOnce(subjects[i]!, sizes[i]!)) / sizes[i]!);
    }
  }
  return subjects.map((subject, i) => {
    const nsPerOp = median(samples[i]!);
    return { name: subject.name, nsPerOp, opsPerSec: 1e9 / nsPerOp };
  });
}

/** Milliseconds taken by `work`, the median of `repeat` runs (each gets a fresh `setup`). */
export async function timeMs<T>(
  repeat: number,
  setup: () => T | Promise<T>,
  work: (input: T) => unknown,
): Promise<{ median: number; min: number; samples: number[] }> {
  const samples: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const input = await setup();
    const start = now();
    const out = work(input);
    if (out instanceof Promise) await out;
    samples.push(Number(now() - start) / 1e6);
  }
  return { median: median(samples), min: Math.min(...samples), samples };
}

export { median };
