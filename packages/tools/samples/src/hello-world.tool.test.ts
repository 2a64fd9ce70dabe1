import { describe, expect, it } from 'vitest';
import { testContext } from '@aptix/tool-contract/testing';
import { errorOf, expectGenericFailureOnException, harness, payloadOf, VIAS } from '../test/harness.js';
import { HelloWorldTool } from './hello-world.tool.js';

describe.each(VIAS)('agent_hello_world, called %s', (via) => {
  it('greets the user by name and carries the session and conversation ids', async () => {
    const h = harness(HelloWorldTool);
    const payload = payloadOf(
      await h.call(via, '{"name":"Ada"}', { context: testContext({ sessionId: 's-42', conversationId: 'c-7' }) }),
    );
    expect(payload).toEqual({ message: 'Hello, Ada!', sessionId: 's-42', conversationId: 'c-7' });
  });

  it('still includes the ids, as null, when the context has none', async () => {
    const h = harness(HelloWorldTool);
    expect(payloadOf(await h.call(via, '{"name":"Ada"}', { context: {} }))).toEqual({
      message: 'Hello, Ada!',
      sessionId: null,
      conversationId: null,
    });
  });

  it.each([
    ['name is missing', '{}', "'name' is required"],
    ['name is empty', '{"name":""}', "'name' must NOT have fewer than 1 characters"],
    ['name is not a string', '{"name":42}', "'name' must be string, got number 42"],
    ['name is null', '{"name":null}', "'name' must be string, got null"],
    ['an unknown argument is sent', '{"name":"Ada","title":"Dr"}', "'title' is not an argument of this tool"],
  ])('fails with INVALID_ARGUMENTS naming the field when %s', async (_case, args, expected) => {
    const error = errorOf(await harness(HelloWorldTool).call(via, args));
    expect(error.code).toBe('INVALID_ARGUMENTS');
    expect(error.message).toContain('Invalid arguments for agent_hello_world');
    expect(error.message).toContain(expected);
  });

  it.each([' ', '   ', '\\t\\n', '\\u00a0\\u2003'])(
    'refuses a name of only whitespace (%j), as agent_change_mode refuses blank strings (TUL-011 §6)',
    async (blank) => {
      const error = errorOf(await harness(HelloWorldTool).call(via, `{"name":"${blank}"}`));
      expect(error).toEqual({
        code: 'INVALID_ARGUMENTS',
        message:
          "Invalid arguments for agent_hello_world: 'name' must be the user's name, got only whitespace; ask the user for their name.",
      });
    },
  );

  it('greets a name with spaces around it as given', async () => {
    expect(payloadOf(await harness(HelloWorldTool).call(via, '{"name":" Ada "}'))).toMatchObject({
      message: 'Hello,  Ada !',
    });
  });

  it.each([
    ['not JSON', '{name: Ada}', 'not valid JSON'],
    ['empty', '', 'no arguments were sent'],
    ['a JSON array', '["Ada"]', 'must be a JSON object'],
  ])('fails with INVALID_ARGUMENTS when the arguments are %s', async (_case, args, expected) => {
    const error = errorOf(await harness(HelloWorldTool).call(via, args));
    expect(error.code).toBe('INVALID_ARGUMENTS');
    expect(error.message).toContain(expected);
  });

  it('turns an exception into a generic failure, with no detail, and logs it', async () => {
    await expectGenericFailureOnException(harness(HelloWorldTool), via, '{"name":"Ada"}');
  });
});
