/**
 * 3d. The audit trail (issue 34): the invoke route of a write tool on a host with the audit trail off
 * against the same host recording every call, on SQLite. The tool is testing_calculator, which declares
 * no readOnlyHint, so it counts as a tool that changes something (testing_ping_pong is read-only, and
 * its calls are not recorded by default). Each call's record is built (its arguments hashed), checked
 * and queued on the event loop; full batches of 100 (a partial one every flushIntervalMs) are posted to
 * the store's audit writer thread, which inserts each in one transaction on a SQLite connection of its
 * own, off the event loop. After the load, the trail is read back over GET /v1/audit to prove the host
 * wrote what it was asked to. The server CPU per request is the whole process's, the writer thread's
 * included: the inserts moved off the event loop, not out of the process.
 */
import { APTIX_BIN } from '../paths.js';
import { freePort, startServer, type Server } from '../processes.js';
import type { Row } from '../report.js';
import { alternate, type HttpOptions } from './http.js';

const SECTION = '3d. Audit trail (autocannon, 10 connections, same machine)';
const TOOL = 'testing_calculator';
const ROUTE = `/v1/tools/${TOOL}/invoke`;
const BODY = JSON.stringify({ arguments: { operation: 'multiply', a: 6, b: 7 } });
const EXPECTED =
  '{"successful":true,"result":{"value":42,"expression":"6 * 7 = 42","sessionId":null,"conversationId":null},"errors":[]}';

/** The number of records the host's trail holds: the newest record's id (ids count up from 1; nothing is pruned here). */
async function recordsWritten(url: string): Promise<number> {
  const response = await fetch(`${url}/v1/audit?limit=1&tool=${TOOL}`);
  const page = (await response.json()) as { records: Array<{ id: string; argumentsHash: string | null }> };
  if (response.status !== 200 || page.records[0]?.argumentsHash == null)
    throw new Error(`GET /v1/audit answered ${response.status} without the calls' records`);
  return Number(page.records[0].id);
}

export async function auditSection(options: HttpOptions, log: (line: string) => void, dbDir: string): Promise<Row[]> {
  const servers: Server[] = [];
  try {
    const start = async (name: string, audit: 'off' | 'on') => {
      const port = await freePort();
      const server = await startServer([APTIX_BIN, 'serve', '--port', String(port)], {
        port,
        cwd: dbDir,
        env: { LOG_LEVEL: 'warn', APTIX_DB: `sqlite:${dbDir}/${name}.db`, APTIX_AUDIT: audit },
      });
      servers.push(server);
      return server;
    };
    const off = await start('audit-off', 'off');
    const on = await start('audit-on', 'on');
    const invoke = { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY };
    for (const server of [off, on]) {
      const answer = await fetch(`${server.url}${ROUTE}`, invoke);
      const text = await answer.text();
      if (text !== EXPECTED) throw new Error(`${server.url} answered ${answer.status} ${text}`);
    }
    log('  audit: invoke, trail off against trail on (SQLite)');
    const [offLoad, onLoad] = await alternate(
      [
        { name: 'audit trail off', options: { url: `${off.url}${ROUTE}`, ...invoke }, pid: off.child.pid },
        { name: 'audit trail on', options: { url: `${on.url}${ROUTE}`, ...invoke }, pid: on.child.pid },
      ],
      options,
      log,
    );
    // The records are written within the flush interval (200 ms by default).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const written = await recordsWritten(on.url);
    log(`  audit: ${written} records written by the host with the trail on`);
    const cpu =
      offLoad!.cpuUs === undefined || onLoad!.cpuUs === undefined
        ? ''
        : ` Server CPU per request ${onLoad!.cpuUs.toFixed(1)} µs on, ${offLoad!.cpuUs.toFixed(1)} µs off.`;
    return [
      {
        section: SECTION,
        measure: `POST ${ROUTE}, audit trail on (SQLite)`,
        figure: onLoad!.rps,
        unit: 'req/s',
        baseline: { name: 'audit trail off', figure: offLoad!.rps },
        goal: { kind: 'ratio-at-least', value: 0.7 },
        note:
          `Every call recorded (principal, session, SHA-256 of the arguments, outcome, duration), ` +
          `written in batches of 100 per transaction (one INSERT statement) by the store's audit writer ` +
          `thread, on a SQLite connection of its own, off the event loop; ${written} records ` +
          `written during the rounds, read back over GET /v1/audit. Trail off: ` +
          `${Math.round(offLoad!.rps)} req/s.${cpu}${cpu === '' ? '' : " The CPU is the whole process's, the writer thread's included."}`,
      },
      {
        section: SECTION,
        measure: '… its p99 latency',
        figure: onLoad!.p99,
        unit: 'ms',
        baseline: { name: 'audit trail off', figure: offLoad!.p99 },
        goal: { kind: 'ratio-at-most', value: 1 / 0.7 },
        note: `Trail off: p99 ${offLoad!.p99.toFixed(2)} ms.`,
      },
    ];
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}
