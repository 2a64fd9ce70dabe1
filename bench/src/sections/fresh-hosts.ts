/**
 * 3b. Fresh hosts: the same invoke load on several `aptix serve` processes, each started fresh, and the
 * CPU per request of each. A host's cost is partly set for its whole life in its first seconds: V8's
 * allocation-site pretenuring can decide then that a request's objects live long, and that host
 * promotes them to the old generation on every scavenge (about 6 ms each instead of 0.6, a full
 * collection every few) and spends 1.5 to 2 times the CPU per request until it exits
 * (docs/hosting.md). `aptix serve` turns that off. This section shows the spread of CPU per request
 * that is left, beside the same hosts with V8's default put back, and so catches a return of the slow
 * host, which the one host of section 3 would meet only now and then.
 */
import autocannon from 'autocannon';
import { median } from '../harness.js';
import { APTIX_BIN } from '../paths.js';
import { cpuMicros, freePort, startServer } from '../processes.js';
import type { Row } from '../report.js';
import { EXPECTED, INVOKE_BODY } from './http.js';

const SECTION = '3b. Fresh hosts: CPU per request over several host processes';
/**
 * The slowest host may spend this much more CPU per request than the median one. Healthy hosts on this
 * shared machine spread up to about 1.3× (where each lands among the cores, what else runs); a host
 * that pretenured its requests spends 1.5 to 2 times the median.
 */
const SPREAD_GOAL = 1.4;

export interface FreshHostOptions {
  /** Host processes of each kind. */
  readonly hosts: number;
  /** One-second windows of measured load on each, after one second of warm-up. */
  readonly windows: number;
}

/**
 * Starts a host (with `nodeFlags`), loads its invoke route, and answers its CPU per request in µs: the
 * median of `windows` one-second windows, so a second in which the machine was busy elsewhere does not
 * make a host look slow; a slow host is slow in every window.
 */
async function oneHost(nodeFlags: readonly string[], dbFile: string, windows: number): Promise<number> {
  const port = await freePort();
  const host = await startServer([...nodeFlags, APTIX_BIN, 'serve', '--port', String(port)], {
    port,
    env: { LOG_LEVEL: 'warn', APTIX_DB: `sqlite:${dbFile}` },
  });
  try {
    const options = {
      url: `${host.url}/v1/tools/testing_ping_pong/invoke`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      body: INVOKE_BODY,
      connections: 10,
      pipelining: 1,
    };
    // It answers what the host of section 3 answers before it is loaded.
    const answer = await (
      await fetch(options.url, { method: 'POST', headers: options.headers, body: INVOKE_BODY })
    ).text();
    if (answer !== EXPECTED) throw new Error(`a fresh host answered ${answer}`);
    await autocannon({ ...options, duration: 1 });
    const figures: number[] = [];
    for (let window = 0; window < windows; window++) {
      const before = cpuMicros(host.child.pid);
      const result = await autocannon({ ...options, duration: 1 });
      const after = cpuMicros(host.child.pid);
      const failed = result.errors + result.timeouts + result.non2xx;
      if (failed > 0)
        throw new Error(
          `a fresh host answered ${result.errors} errors, ${result.timeouts} time-outs and ${result.non2xx} non-2xx answers`,
        );
      if (before === undefined || after === undefined)
        throw new Error('the host process CPU time cannot be read from /proc on this machine');
      figures.push((after - before) / result.requests.total);
    }
    return median(figures);
  } finally {
    await host.stop();
  }
}

const list = (figures: readonly number[]) => figures.map((us) => us.toFixed(1)).join(', ');

export async function freshHostsSection(
  { hosts, windows }: FreshHostOptions,
  log: (line: string) => void,
  dbDir: string,
): Promise<Row[]> {
  const served: number[] = [];
  const pretenuring: number[] = [];
  // The two kinds take turns, so a change in the machine's load falls on both.
  for (let i = 0; i < hosts; i++) {
    served.push(await oneHost([], `${dbDir}/served-${i}.db`, windows));
    pretenuring.push(await oneHost(['--allocation-site-pretenuring'], `${dbDir}/pretenuring-${i}.db`, windows));
    log(
      `    host ${i + 1}: aptix serve ${served[i]!.toFixed(1)} µs per request, with pretenuring ${pretenuring[i]!.toFixed(1)} µs`,
    );
  }
  const typical = median(served);
  const slow = (figures: readonly number[]) => figures.filter((us) => us > typical * SPREAD_GOAL).length;
  return [
    {
      section: SECTION,
      measure: `invoke, the slowest of ${hosts} fresh \`aptix serve\` hosts`,
      figure: Math.max(...served),
      unit: 'µs',
      baseline: { name: 'their median', figure: typical },
      goal: { kind: 'ratio-at-most', value: SPREAD_GOAL },
      note:
        `µs of CPU per request (server process, /proc) under the invoke load of section 3, each ` +
        `host's median of ${windows} one-second windows after 1 s of warm-up; each host: ` +
        `${list(served)}. ${slow(served)} of ${hosts} above ${SPREAD_GOAL}× the median.`,
    },
    {
      section: SECTION,
      measure: `… ${hosts} hosts with V8's allocation-site pretenuring on (node --allocation-site-pretenuring)`,
      figure: Math.max(...pretenuring),
      unit: 'µs',
      baseline: { name: 'median of the aptix serve hosts', figure: typical },
      note: `V8's default, which aptix serve turns off (docs/hosting.md); each host: ${list(pretenuring)}. ${slow(pretenuring)} of ${hosts} above ${SPREAD_GOAL}× the median of the aptix serve hosts.`,
    },
  ];
}
