import { describe, expect, it } from 'vitest';
import { testContext } from '@aptix/tool-contract/testing';
import { errorOf, expectGenericFailureOnException, harness, payloadOf, VIAS } from '../test/harness.js';
import { PingPongTool } from './ping-pong.tool.js';

describe.each(VIAS)('testing_ping_pong, called %s', (via) => {
  it('answers with one pong by default, with the session and conversation ids', async () => {
    const h = harness(PingPongTool);
    const payload = payloadOf(
      await h.call(via, '{"message":"hello"}', { context: testContext({ sessionId: 's-1', conversationId: 'c-1' }) }),
    );
    expect(payload).toEqual({ reply: 'pong: hello', count: 1, sessionId: 's-1', conversationId: 'c-1' });
  });

  it.each([
    [1, 'pong: hi'],
    [3, 'pong pong pong: hi'],
    [10, `${Array(10).fill('pong').join(' ')}: hi`],
  ])('says pong count times (count %i)', async (count, reply) => {
    const payload = payloadOf(await harness(PingPongTool).call(via, JSON.stringify({ message: 'hi', count })));
    expect(payload).toMatchObject({ reply, count });
  });

  it('treats a null count as omitted (how OpenAI strict mode leaves out an optional argument)', async () => {
    expect(payloadOf(await harness(PingPongTool).call(via, '{"message":"hi","count":null}'))).toMatchObject({
      reply: 'pong: hi',
      count: 1,
    });
  });

  it.each([
    ['message is missing', '{"count":2}', "'message' is required"],
    ['message is empty', '{"message":""}', "'message' must NOT have fewer than 1 characters"],
    ['message is not a string', '{"message":["hi"]}', "'message' must be string"],
    ['count is 0', '{"message":"hi","count":0}', "'count' must be >= 1, got number 0"],
    ['count is 11', '{"message":"hi","count":11}', "'count' must be <= 10, got number 11"],
    ['count is not whole', '{"message":"hi","count":2.5}', "'count' must be integer, got number 2.5"],
    ['count is a string', '{"message":"hi","count":"3"}', '\'count\' must be integer, got string "3"'],
  ])('fails with INVALID_ARGUMENTS naming the field when %s', async (_case, args, expected) => {
    const error = errorOf(await harness(PingPongTool).call(via, args));
    expect(error.code).toBe('INVALID_ARGUMENTS');
    expect(error.message).toContain(expected);
  });

  it('reports every offending field at once', async () => {
    const error = errorOf(await harness(PingPongTool).call(via, '{"count":99}'));
    expect(error.message).toContain("'message' is required");
    expect(error.message).toContain("'count' must be <= 10");
  });

  it('turns an exception into a generic failure, with no detail, and logs it', async () => {
    await expectGenericFailureOnException(harness(PingPongTool), via, '{"message":"hi"}');
  });
});
