/**
 * Every error the framework raises, in Aptix's shape `{ error: { code, message } }`, with a message
 * that says what to send instead; sent over raw TCP so nothing cleans the request up on the way.
 */
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  hostForSuite,
  rawHttp,
  rawRequest,
  runCli,
  scratch,
  startHost,
  type RawResponse,
  type RunningHost,
} from './support.js';

describe('errors over HTTP', () => {
  const suite = hostForSuite();
  let host: RunningHost;
  beforeAll(() => {
    host = suite.host;
  });
  const answers: RawResponse[] = [];
  const send = async (text: string | Buffer) => {
    const answer = await rawHttp(host.url, text);
    answers.push(answer);
    return answer;
  };
  const post = (
    target: string,
    body: string,
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ) => send(rawRequest(host.url, 'POST', target, headers, body));
  const invoke = (body: unknown) =>
    post('/v1/tools/testing_ping_pong/invoke', typeof body === 'string' ? body : JSON.stringify(body));
  const expectError = (answer: RawResponse, status: number, code: string, message: RegExp | string) => {
    expect(answer.status, answer.body).toBe(status);
    expect(Object.keys(answer.json ?? {})).toEqual(['error']);
    expect(answer.json!.error.code).toBe(code);
    expect(answer.json!.error.message).toEqual(
      typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
    );
  };

  it('415 for a body without a content-type, or with another one, saying to send application/json', async () => {
    expectError(
      await post('/v1/tools/testing_ping_pong/invoke', '{"arguments":{"message":"hi"}}', {}),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      /send content-type: application\/json/i,
    );
    expectError(
      await post('/v1/tools/testing_ping_pong/invoke', '{"arguments":{}}', { 'content-type': 'text/plain' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      /send content-type: application\/json/i,
    );
    expectError(
      await post('/v1/sessions', 'mode=general', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      '"application/x-www-form-urlencoded" is not accepted',
    );
  });

  it('refuses a __proto__ or constructor.prototype key, saying so', async () => {
    for (const body of [
      '{"arguments":{"message":"hi"},"__proto__":{"polluted":true}}',
      '{"arguments":{"message":"hi","__proto__":{"x":1}}}',
      '{"arguments":{"message":"hi"},"constructor":{"prototype":{"polluted":true}}}',
      '{"arguments":{"message":"hi"},"\\u005f_proto__":{}}',
    ]) {
      expectError(await invoke(body), 400, 'PROTOTYPE_KEY', '"__proto__"');
    }
  });

  it('says where invalid JSON breaks, and what an empty body needs', async () => {
    expectError(await invoke('{"arguments":'), 400, 'INVALID_JSON', /not valid JSON \(.+\)\. Send one JSON document/);
    expectError(await invoke(''), 400, 'EMPTY_BODY', 'leave out the content-type');
  });

  it('refuses unknown body fields, naming the right one', async () => {
    expectError(
      await invoke({ arguments: { message: 'hi' }, sessionId: 's-1' }),
      400,
      'BAD_REQUEST',
      'put it in context.sessionId',
    );
    expectError(
      await invoke({ arguments: { message: 'hi' }, conversationId: 'c-1' }),
      400,
      'BAD_REQUEST',
      'put it in context.conversationId',
    );
    expectError(
      await invoke({ arguments: { message: 'hi' }, contxt: {} }),
      400,
      'BAD_REQUEST',
      'unknown field "contxt" in the body: did you mean "context"?',
    );
    expectError(
      await invoke({ arguments: { message: 'hi' }, context: { sesionId: 'x' } }),
      400,
      'BAD_REQUEST',
      'unknown field "sesionId" in context (in the body): did you mean "sessionId"?',
    );
    expectError(
      await invoke({ args: {} }),
      400,
      'BAD_REQUEST',
      'the body is missing the field "arguments" (it has "args": did you mean "arguments"?)',
    );
    expectError(await invoke({}), 400, 'BAD_REQUEST', 'the body is missing the field "arguments"');
    expectError(await invoke({ arguments: [1, 2] }), 400, 'BAD_REQUEST', 'arguments must be a JSON object or a string');
    expectError(await invoke('[1]'), 400, 'BAD_REQUEST', 'the body must be a JSON object');
    expectError(
      await post('/v1/sessions', JSON.stringify({ mode: 'general', owner: 'me' })),
      400,
      'BAD_REQUEST',
      /unknown field "owner" in the body.*accepted: mode, org, user/,
    );
  });

  it('reads query errors plainly', async () => {
    const get = (target: string) => send(rawRequest(host.url, 'GET', target));
    expectError(await get('/v1/tools?format=xml'), 400, 'BAD_REQUEST', 'format must be one of responses, chat, mcp');
    expectError(
      await get('/v1/tools?fromat=chat'),
      400,
      'BAD_REQUEST',
      'unknown field "fromat" in the query: did you mean "format"?',
    );
  });

  it('400 for bad percent-encoding, 414 for a URL or segment too long, 431 for headers too large, 404 for no route', async () => {
    const get = (target: string, headers: Record<string, string> = {}) =>
      send(rawRequest(host.url, 'GET', target, headers));
    expectError(await get('/v1/tools/%zz'), 400, 'BAD_URL', 'Encode "%" as %25');
    expectError(await get(`/v1/tools/${'a'.repeat(300)}`), 414, 'URL_TOO_LONG', 'longer than 256 characters');
    expectError(await get(`/v1/tools?mode=${'a'.repeat(5000)}`), 414, 'URL_TOO_LONG', 'maxUrlLength');
    expectError(
      await get('/v1/modes', { 'x-big': 'a'.repeat(20_000) }),
      431,
      'HEADERS_TOO_LARGE',
      'Send fewer or shorter headers',
    );
    expectError(await get('/v1/nope'), 404, 'NOT_FOUND', 'No route GET /v1/nope');
    expectError(await send('NOT HTTP AT ALL\r\n\r\n'), 400, 'BAD_REQUEST', 'not valid HTTP/1.1');
  });

  it('413 names the limit', async () => {
    expectError(
      await invoke({ arguments: { message: 'x'.repeat(1024 * 1024 + 10) } }),
      413,
      'BODY_TOO_LARGE',
      `limit of ${1024 * 1024} bytes`,
    );
  });

  // A client still sending a body too large must read its 413, not a reset connection; one declaring a huge body is cut off.
  it('413: reads the rest of a body a few times the limit, so its client gets the answer and keeps the connection; cuts off a huge one', async () => {
    const limit = 1024 * 1024;
    const prefix = '{"arguments":{"message":"';
    const { hostname, port } = new URL(host.url);
    const opened = (path: string, declared: number) => {
      const socket = connect(Number(port), hostname);
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.on('error', () => {});
      let closed = false;
      socket.once('close', () => (closed = true));
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${new URL(host.url).host}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${prefix}`,
      );
      // The whole answers received so far, each as its head and its body (read by its content-length).
      const answers = () => {
        const out: Array<{ head: string; body: string }> = [];
        let rest = received;
        for (;;) {
          const end = rest.indexOf('\r\n\r\n');
          if (end < 0) return out;
          const head = rest.slice(0, end);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (rest.length < end + 4 + length) return out;
          out.push({ head, body: rest.slice(end + 4, end + 4 + length) });
          rest = rest.slice(end + 4 + length);
        }
      };
      return { socket, closed: () => closed, answers };
    };
    const waitFor = async (what: string, ready: () => boolean) => {
      for (let i = 0; i < 200 && !ready(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      if (!ready()) throw new Error(`${what} did not happen within 5 s`);
    };

    // The invoke route answers in Aptix's shape, /mcp as JSON-RPC: both say the limit, both read on.
    for (const path of ['/v1/tools/testing_ping_pong/invoke', '/mcp']) {
      const near = opened(path, 2 * limit);
      await waitFor(`the 413 of ${path}`, () => near.answers().length === 1);
      const [tooLarge] = near.answers();
      expect(tooLarge!.head).toMatch(/^HTTP\/1\.1 413 /);
      expect(tooLarge!.body).toContain(`limit of ${limit} bytes`);
      expect(tooLarge!.head).not.toMatch(/connection: close/i);
      // The client sends the rest of what it declared, then another request on the same connection.
      near.socket.write('x'.repeat(2 * limit - prefix.length));
      near.socket.write(`GET /healthz HTTP/1.1\r\nHost: ${new URL(host.url).host}\r\n\r\n`);
      await waitFor(`the answer to the request after ${path}'s 413`, () => near.answers().length === 2);
      expect(near.answers()[1]!.head).toMatch(/^HTTP\/1\.1 200 /);
      near.socket.destroy();

      const huge = opened(path, 100 * limit);
      await waitFor(`the 413 of ${path} and the close`, () => huge.answers().length === 1 && huge.closed());
      expect(huge.answers()[0]!.head).toMatch(/^HTTP\/1\.1 413 [^]*connection: close/i);
    }
  });

  it('printed no stack trace and no FSTDEP023 warning, and answered none', () => {
    const everything = [host.output(), ...answers.map((answer) => answer.body)].join('\n');
    expect(everything).not.toContain('    at ');
    expect(everything).not.toContain('FSTDEP');
    expect(everything).not.toContain('FST_ERR');
  });
});

describe('starting on a port already in use', () => {
  it('says so, and names --port and APTIX_PORT', async () => {
    const space = scratch();
    const first = await startHost({ env: { APTIX_DB: space.db } });
    try {
      const { port } = new URL(first.url);
      const second = await runCli(['serve', '--port', port], { env: { APTIX_DB: space.db } });
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/Port \d+ on 127\.0\.0\.1 is already in use/);
      expect(second.stderr).toContain('--port');
      expect(second.stderr).toContain('APTIX_PORT');
      const viaEnv = await runCli(['serve'], { env: { APTIX_DB: space.db, APTIX_PORT: port } });
      expect(viaEnv.stderr).toContain('already in use');
    } finally {
      await first.stop();
      space.cleanup();
    }
  });

  it('serve --help documents APTIX_PORT', async () => {
    const help = await runCli(['serve', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('APTIX_PORT');
    expect(help.stdout).toContain('APTIX_API_KEYS');
  });
});
