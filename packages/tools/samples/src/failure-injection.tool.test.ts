import { describe, expect, it } from 'vitest';
import { testContext } from '@aptix/tool-contract/testing';
import { errorOf, harness, SECRET, VIAS } from '../test/harness.js';
import { FailureInjectionTool } from './failure-injection.tool.js';

const context = testContext({ sessionId: 's-5', conversationId: 'c-5' });

describe.each(VIAS)('testing_failure_injection, called %s', (via) => {
  describe('mode "error"', () => {
    it('returns a failed result with a code', async () => {
      const error = errorOf(
        await harness(FailureInjectionTool).call(via, '{"mode":"error","payload":"run 42"}', { context }),
      );
      expect(error).toEqual({
        message: 'testing_failure_injection failed on purpose (mode "error").',
        code: 'INTENTIONAL_FAILURE',
      });
    });

    it('logs the custom event of AGN-005 §6.2, with its pairs in order', async () => {
      const h = harness(FailureInjectionTool);
      await h.call(via, '{"mode":"error","payload":"run 42"}', { context });
      expect(h.logger.entries).toEqual([
        {
          kind: 'event',
          level: 'error',
          tag: 'FailureInjectionTool.ExecuteAsync',
          message: 'Intentional failure requested.',
          pairs: [
            ['ConversationId', 'c-5'],
            ['SessionId', 's-5'],
            ['Payload', 'run 42'],
          ],
        },
      ]);
    });

    it('logs empty strings for a missing payload and missing ids', async () => {
      const h = harness(FailureInjectionTool);
      await h.call(via, '{"mode":"error"}', { context: {} });
      expect(h.logger.events().map((event) => event.pairs)).toEqual([
        [
          ['ConversationId', ''],
          ['SessionId', ''],
          ['Payload', ''],
        ],
      ]);
    });

    it('treats a null payload as omitted (how OpenAI strict mode leaves out an optional argument)', async () => {
      const h = harness(FailureInjectionTool);
      await h.call(via, '{"mode":"error","payload":null}', { context });
      expect(h.logger.events()[0]?.pairs).toContainEqual(['Payload', '']);
    });
  });

  describe('mode "exception"', () => {
    it('comes back as a generic failure, with no detail and no stack', async () => {
      const h = harness(FailureInjectionTool);
      const error = errorOf(await h.call(via, JSON.stringify({ mode: 'exception', payload: SECRET }), { context }));
      expect(error).toEqual({
        message: 'testing_failure_injection failed to process arguments.',
        code: 'TOOL_EXCEPTION',
      });
    });

    it('logs the exception once, with its tag and the ids; no custom event', async () => {
      const h = harness(FailureInjectionTool);
      await h.call(via, JSON.stringify({ mode: 'exception', payload: SECRET }), { context });
      expect(h.logger.entries).toHaveLength(1);
      const [exception] = h.logger.exceptions();
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the test guards what the declared type rules out
      expect(exception?.tag).toBe('[testing_failure_injection_ExecuteAsync__Exception]');
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the test guards what the declared type rules out
      expect(exception?.message).toContain(SECRET);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the test guards what the declared type rules out
      expect(exception?.pairs).toEqual([
        ['SessionId', 's-5'],
        ['ConversationId', 'c-5'],
      ]);
    });
  });

  it.each([
    ['mode is missing', '{"payload":"x"}', "'mode' is required"],
    [
      'mode is unknown',
      '{"mode":"crash"}',
      `'mode' must be one of "error", "exception", "malformed_json", got string "crash"`,
    ],
    ['payload is not a string', '{"mode":"error","payload":5}', "'payload' must be string, got number 5"],
  ])(
    'fails with INVALID_ARGUMENTS naming the field, without failing on purpose, when %s',
    async (_case, args, expected) => {
      const h = harness(FailureInjectionTool);
      const error = errorOf(await h.call(via, args));
      expect(error.code).toBe('INVALID_ARGUMENTS');
      expect(error.message).toContain(expected);
      expect(h.logger.entries).toEqual([]);
    },
  );
});

describe('testing_failure_injection, mode "malformed_json"', () => {
  it('through the executor, comes back as a failed result with MALFORMED_RESULT, and nothing malformed passed on', async () => {
    const h = harness(FailureInjectionTool);
    const result = await h.call('executor', '{"mode":"malformed_json"}', { context });
    expect(errorOf(result)).toEqual({
      message: 'testing_failure_injection returned a result that is not valid JSON.',
      code: 'MALFORMED_RESULT',
    });
    expect(h.logger.errors().map((entry) => entry.tag)).toEqual([
      '[testing_failure_injection_ExecuteAsync__MalformedResult]',
    ]);
  });

  it('called directly, hands back the raw text: guarding against it is the executor’s job, which is what the mode tests', async () => {
    const result = await harness(FailureInjectionTool).call('direct', '{"mode":"malformed_json"}', { context });
    expect(result.successful).toBe(true);
    expect(() => JSON.parse(result.result as string)).toThrow(SyntaxError);
  });
});

describe('testing_failure_injection through the executor', () => {
  it('never gives a successful result, whatever the mode', async () => {
    const h = harness(FailureInjectionTool);
    for (const mode of ['error', 'exception', 'malformed_json']) {
      const result = await h.call('executor', JSON.stringify({ mode }), { context });
      expect(result.successful, mode).toBe(false);
    }
  });
});
