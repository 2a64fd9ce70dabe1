import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { RequestLogger } from '../src/http/request-logger.js';

type Line = Record<string, unknown>;

/** A pino logger at `level` writing into an array, and the lines it wrote. */
function capture(level: string): { parent: pino.Logger; lines: Line[] } {
  const lines: Line[] = [];
  const parent = pino(
    { level, base: { pid: 7 } },
    { write: (text: string) => void lines.push(JSON.parse(text) as Line) },
  );
  return { parent, lines };
}

describe("RequestLogger (each HTTP request's logger)", () => {
  it("writes the request's bindings on every line, whether a line is an access line, a message, an Error or a later child's", () => {
    const { parent, lines } = capture('info');
    const log = new RequestLogger(parent, { reqId: 'r-1' }).asFastifyLogger();
    log.info({ method: 'POST', statusCode: 200 }, 'request completed');
    log.warn('plain message');
    log.error(new Error('boom'));
    log.error({ err: new Error('inner'), tag: 't' }, 'with fields');
    const keyed = log.child({ actor: 'ci' });
    keyed.info({ statusCode: 201 }, 'after the key');
    keyed.info('message only');
    expect(lines.map((line) => line.reqId)).toEqual(['r-1', 'r-1', 'r-1', 'r-1', 'r-1', 'r-1']);
    expect(lines.slice(4).map((line) => line.actor)).toEqual(['ci', 'ci']);
    expect(lines[0]).toMatchObject({ level: 30, pid: 7, method: 'POST', statusCode: 200, msg: 'request completed' });
    expect(lines[2]).toMatchObject({ level: 50, msg: 'boom', err: { message: 'boom', type: 'Error' } });
    expect(lines[3]).toMatchObject({ tag: 't', msg: 'with fields', err: { message: 'inner' } });
    // The same JSON, in the same key order, as a pino child with those bindings writes.
    const { parent: reference, lines: expected } = capture('info');
    reference.child({ reqId: 'r-1' }).info({ method: 'POST', statusCode: 200 }, 'request completed');
    expect(Object.keys(lines[0]!)).toEqual(Object.keys(expected[0]!));
  });

  it("writes nothing below the host's level", () => {
    const { parent, lines } = capture('warn');
    const log = new RequestLogger(parent, { reqId: 'r-2' }).asFastifyLogger();
    log.info({ statusCode: 200 }, 'request completed');
    log.debug('debug');
    log.trace('trace');
    expect(lines).toEqual([]);
    log.warn({ detail: 1 }, 'kept');
    expect(lines).toEqual([expect.objectContaining({ reqId: 'r-2', detail: 1, msg: 'kept' })]);
    expect(log.level).toBe('warn');
  });

  it("writes the access line as a pino child would, whether the request logged before it or not, with the key's name once known", () => {
    const { parent, lines } = capture('info');
    RequestLogger.forRequest(parent, 'r-3').completed('POST', '/v1/tools/t/invoke', 200, 0.042);
    const logged = RequestLogger.forRequest(parent, 'r-4');
    logged.asFastifyLogger().warn('before');
    logged.completed('GET', '/healthz', 200, 1.5);
    const keyed = RequestLogger.forRequest(parent, 'r-5')
      .asFastifyLogger()
      .child({ actor: 'ci' }) as unknown as RequestLogger;
    keyed.completed('DELETE', '/mcp', 404, 0.003);
    const { parent: reference, lines: expected } = capture('info');
    reference
      .child({ reqId: 'r-3' })
      .info({ method: 'POST', url: '/v1/tools/t/invoke', statusCode: 200, responseTime: 0.042 }, 'request completed');
    reference.child({ reqId: 'r-4' }).warn('before');
    reference
      .child({ reqId: 'r-4' })
      .info({ method: 'GET', url: '/healthz', statusCode: 200, responseTime: 1.5 }, 'request completed');
    reference
      .child({ reqId: 'r-5', actor: 'ci' })
      .info({ method: 'DELETE', url: '/mcp', statusCode: 404, responseTime: 0.003 }, 'request completed');
    const withoutTime = (line: Line) => JSON.stringify({ ...line, time: 0 });
    expect(lines.map(withoutTime)).toEqual(expected.map(withoutTime));
    expect(lines.map((line) => Object.keys(line))).toEqual(expected.map((line) => Object.keys(line)));
  });

  it('writes no access line below info', () => {
    const { parent, lines } = capture('warn');
    RequestLogger.forRequest(parent, 'r-6').completed('POST', '/x', 200, 1);
    expect(lines).toEqual([]);
  });
});
