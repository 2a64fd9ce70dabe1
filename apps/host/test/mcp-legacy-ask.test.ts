/**
 * A tool that asks its caller's user mid-call (`InvokeResult.inputRequired`) on a 2025-era MCP session:
 * when the client declared form elicitation, the host sends each question as `elicitation/create` on the
 * call's stream and calls the tool again with the answers and its state. Real `aptix serve`, the real
 * test/fixtures/asking-tools package, a real v1 SDK client.
 */
import { join } from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { configuredHostForSuite, connectV1, FIRST_PARTY } from './mcp-host.js';
import { HOST_ROOT } from './support.js';

const PACKAGE = join(HOST_ROOT, 'test', 'fixtures', 'asking-tools');

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };

const suite = configuredHostForSuite(
  {
    toolPackages: [...FIRST_PARTY, PACKAGE],
    modes: { extend: { general: ['ask_name_and_colour', 'ask_forever'] } },
  },
  60_000,
);

/** A v1 client; with `answer`, it declares elicitation and answers each question (and records it). */
async function legacyClient(answer?: (message: string, schema: unknown) => Answer): Promise<LegacyClient> {
  const client = new LegacyClient(
    { name: 'aptix-legacy-ask', version: '1.0.0' },
    answer ? { capabilities: { elicitation: {} } } : {},
  );
  if (answer)
    client.setRequestHandler(
      ElicitRequestSchema,
      async (request) =>
        answer(request.params.message, (request.params as { requestedSchema?: unknown }).requestedSchema) as never,
    );
  return connectV1(`${suite.host.url}/mcp`, client);
}

const textOf = (result: object) =>
  (((result as { content?: unknown }).content as Array<{ text?: string }>) ?? [])
    .map((block) => block.text ?? '')
    .join('\n');

describe('a tool that asks, on a 2025 session (v1 SDK client)', () => {
  it('asks each question as elicitation/create, over two rounds, and the tool gets both answers and its state', async () => {
    const asked: Array<{ message: string; schema: unknown }> = [];
    const client = await legacyClient((message, schema) => {
      asked.push({ message, schema });
      return message === 'What is your name?'
        ? { action: 'accept', content: { name: 'Ada' } }
        : { action: 'accept', content: { colour: 'teal' } };
    });
    try {
      const result = await client.callTool({ name: 'ask_name_and_colour', arguments: { greeting: 'Hi' } });
      expect(result.isError).toBeFalsy();
      expect(JSON.parse(textOf(result))).toMatchObject({ text: 'Hi, Ada, lover of teal!', rounds: 2, canAsk: true });
      expect(asked).toEqual([
        {
          message: 'What is your name?',
          schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
        {
          message: 'Which colour do you like, Ada?',
          schema: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] },
        },
      ]);
    } finally {
      await client.close();
    }
  });

  it('a declined question reaches the tool as declined, and the tool says nothing was done', async () => {
    let questions = 0;
    const client = await legacyClient(() => (questions++, { action: 'decline' }));
    try {
      const result = await client.callTool({ name: 'ask_name_and_colour', arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe('No name was given; nothing was done.');
      expect(questions).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('a tool that keeps asking is stopped after 8 rounds, with an error naming the limit', async () => {
    const asked: string[] = [];
    const client = await legacyClient(
      (message) => (asked.push(message), { action: 'accept', content: { answer: 'more' } }),
    );
    try {
      const result = await client.callTool({ name: 'ask_forever', arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/asked 8 rounds of questions \(the limit for one call\)/);
      expect(asked).toEqual(Array.from({ length: 8 }, (_, i) => `Round ${i + 1}: anything?`));
    } finally {
      await client.close();
    }
  });

  it('a call cancelled while its question is open stops asking, and frees the session for the next question', async () => {
    const controller = new AbortController();
    const asked: string[] = [];
    const client = await legacyClient((message) => {
      asked.push(message);
      if (message.startsWith('Round')) controller.abort();
      return message === 'What is your name?'
        ? { action: 'accept', content: { name: 'Ada' } }
        : { action: 'accept', content: { colour: 'teal', answer: 'more' } };
    });
    try {
      await expect(
        client.callTool({ name: 'ask_forever', arguments: {} }, undefined, { signal: controller.signal }),
      ).rejects.toThrow();
      // The session's question channel was released: the next call is asked, both rounds.
      const next = await client.callTool({ name: 'ask_name_and_colour', arguments: {} });
      expect(JSON.parse(textOf(next))).toMatchObject({ text: 'Hello, Ada, lover of teal!' });
      expect(asked).toEqual(['Round 1: anything?', 'What is your name?', 'Which colour do you like, Ada?']);
    } finally {
      await client.close();
    }
  });

  it('a client without elicitation is never asked: the tool fails with INPUT_REQUIRED, as before', async () => {
    const client = await legacyClient();
    try {
      const result = await client.callTool({ name: 'ask_name_and_colour', arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        'This call needs answers from the user that this caller cannot relay, so nothing was done.',
      );
    } finally {
      await client.close();
    }
  });
});
