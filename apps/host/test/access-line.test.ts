import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { accessLineWriter, jsonLineLogger } from '../src/logger.js';

/** The lines written into a stream, as text. */
function sink(): { stream: { write(line: string): void }; lines: string[] } {
  const lines: string[] = [];
  return { stream: { write: (line: string) => void lines.push(line) }, lines };
}

/** A line with its time replaced, so two lines written a millisecond apart compare equal. */
const timeless = (line: string) => line.replace(/,"time":\d+,/, ',"time":0,');

describe("the access line's writer (the host's own JSON-line logger at info)", () => {
  it('writes the same text as pino would, odd strings included', () => {
    const { stream, lines } = sink();
    const write = accessLineWriter(jsonLineLogger({ level: 'info', base: { pid: 7 } }, stream))!;
    const { stream: referenceStream, lines: expected } = sink();
    const reference = pino({ level: 'info', base: { pid: 7 } }, referenceStream);
    const cases: Array<[string, string, string, number, number]> = [
      ['3cd0122cf1f55415-q8w', 'POST', '/v1/tools/testing_ping_pong/invoke', 200, 0.031],
      ['given.id-1', 'GET', '/v1/tools?q="quoted"&b=\\back', 404, 12.5],
      ['r', 'DELETE', `/mcp/${'x'.repeat(300)}?é=ü&emoji=😀&nl=\n&tab=\t`, 500, 1],
      ['r2', 'OPTIONS', '/\u0000\u001f\u007f\u2028', 204, 0],
      // Response times as the host rounds them (to the µs), and others, which V8 writes.
      ['r3', 'GET', '/', 200, 1234.567],
      ['r4', 'GET', '/', 200, 0.1],
      ['r5', 'GET', '/', 200, 100.001],
      ['r6', 'GET', '/', 200, 0.12345678],
      ['r7', 'GET', '/', 200, 1e21],
      ['r8', 'GET', '/', 200, 987654321.5],
      // A method Node's parser would not give (the known ones are looked up), written as pino would.
      ['r9', 'BREW"\\', '/', 418, 2],
    ];
    for (const [reqId, method, url, statusCode, responseTime] of cases) {
      write(reqId, method, url, statusCode, responseTime);
      reference.info({ reqId, method, url, statusCode, responseTime }, 'request completed');
    }
    expect(lines.map(timeless)).toEqual(expected.map(timeless));
    expect(JSON.parse(lines[1]!)).toMatchObject({
      level: 30,
      pid: 7,
      reqId: 'given.id-1',
      url: '/v1/tools?q="quoted"&b=\\back',
      statusCode: 404,
      responseTime: 12.5,
      msg: 'request completed',
    });
  });

  it('stamps each line with the time it is written, across milliseconds', async () => {
    const { stream, lines } = sink();
    const write = accessLineWriter(jsonLineLogger({ level: 'info', base: { pid: 7 } }, stream))!;
    for (let i = 0; i < 3; i++) {
      const before = Date.now();
      write('r', 'GET', '/', 200, 1);
      const after = Date.now();
      const { time } = JSON.parse(lines[i]!) as { time: number };
      expect(time).toBeGreaterThanOrEqual(before);
      expect(time).toBeLessThanOrEqual(after);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
  });

  it("is not offered below info, nor for a logger the host did not make (an embedder's, which may have serializers or redaction)", () => {
    expect(accessLineWriter(jsonLineLogger({ level: 'warn', base: { pid: 7 } }, sink().stream))).toBeUndefined();
    expect(accessLineWriter(pino({ level: 'info' }, sink().stream))).toBeUndefined();
  });
});
