import { setFlagsFromString } from 'node:v8';

/** The default of `heapGrowthPercent`: a full collection once the heap is half again as large as what it kept. */
export const DEFAULT_HEAP_GROWTH_PERCENT = 50;

/**
 * Bounds how far V8 lets the JavaScript heap grow past what the last full collection kept, before
 * the next one: `percent` of it (0 leaves the choice to V8). V8 on its own grows the heap up to four
 * times what is live while collecting is cheap, and does not hand that memory back when the host
 * goes idle: a burst of 30,000 MCP requests left a host at about 290 MiB RSS with about 45 MiB live,
 * whether they opened 10,000 sessions or used one. With 50 the same burst leaves about 170 MiB, for
 * more frequent (incremental, mostly concurrent) full collections. A `--heap-growing-percent` given
 * to node itself wins. Only `aptix serve` sets it: a long-running process that owns its heap.
 */
export function boundHeapGrowth(percent: number, execArgv: readonly string[] = process.execArgv): boolean {
  if (percent === 0 || execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg))) return false;
  // A flag V8 reads each time it sets the next collection's limit, so setting it after start-up takes effect.
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  return true;
}

/**
 * Turns off V8's allocation-site pretenuring for the host process, unless node was given a
 * `--[no-]allocation-site-pretenuring` of its own. V8 allocates straight into the old generation the
 * objects of a site whose objects it saw survive a young collection; a host's per-request objects die
 * young, but a burst (start-up's compiles, a slow turn) can make a site look long-lived, and V8 never
 * takes that back. A host that got such a verdict for a request's objects spent about twice the CPU on
 * each request for its whole life: every scavenge promoted 4 to 6 MB its request objects kept alive
 * from the old generation (5 ms a scavenge instead of 0.4), and a full collection followed every fifth
 * (bench section 3 and `--trace-gc`, one host process in four to six on an Intel Xeon VM). Without
 * pretenuring, ten hosts in ten ran at the normal cost. A flag V8 reads when it weighs a site's
 * survivors at each scavenge, so setting it after start-up takes effect.
 */
export function avoidPretenuring(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => /^--(no[-_])?allocation[-_]site[-_]pretenuring/.test(arg))) return false;
  setFlagsFromString('--no-allocation-site-pretenuring');
  return true;
}
