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
