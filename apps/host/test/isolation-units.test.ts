/**
 * An isolated package's prompts and resources (issue 37): a real `aptix serve` loads a real package
 * (test/fixtures/isolated-units: unit-tools' prompts and resources and three more) with
 * `isolation: "worker"`, and real MCP clients list, get, read, complete and subscribe as they do for a
 * package in process (mcp-units.test.ts). Render, read and completion run in the worker threads, under
 * the host's time limit: a render that hangs or keeps its thread busy fails that request only (the
 * busy worker is replaced), and what cannot cross from a worker is a clear error.
 */
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  configuredHostForSuite,
  FIXTURE_GREETING_LISTED,
  connectV1,
  connectV2,
  FIRST_PARTY,
  hearsCounterUpdates,
  readsFixtureDocuments,
} from './mcp-host.js';
import { HOST_ROOT } from './support.js';

const PACKAGE = join(HOST_ROOT, 'test', 'fixtures', 'isolated-units');

const suite = configuredHostForSuite(
  {
    toolPackages: [...FIRST_PARTY, { package: PACKAGE, isolation: 'worker', workers: 2 }],
    unitTimeoutMs: 300,
  },
  60_000,
);
const v1 = () => connectV1(`${suite.host.url}/mcp`, 'aptix-isolation-units-v1');
const v2 = () => connectV2(`${suite.host.url}/mcp`, 'aptix-isolation-units-v2');

const textOf = (message: { content: unknown }) => (message.content as { text: string }).text;

describe('an isolated package offers its prompts and resources', () => {
  it('lists, gets, reads and completes them as in process, rendering in a worker thread (2025 client)', async () => {
    const client = await v1();
    try {
      expect(client.getServerCapabilities()).toMatchObject({
        prompts: {},
        resources: { subscribe: true },
        completions: {},
      });
      const prompts = (await client.listPrompts()).prompts;
      expect(prompts.find((prompt) => prompt.name === 'fixture_greeting')).toEqual(FIXTURE_GREETING_LISTED);
      // The package's modes hold in a worker too.
      expect(prompts.map((prompt) => prompt.name)).not.toContain('fixture_diagnostics_only');

      const got = await client.getPrompt({ name: 'fixture_greeting', arguments: { name: 'Ada', style: 'formal' } });
      expect(got.messages).toEqual([
        { role: 'user', content: { type: 'text', text: 'Greet Ada in a formal style.' } },
        { role: 'assistant', content: { type: 'text', text: 'Understood.' } },
      ]);
      const where = textOf((await client.getPrompt({ name: 'fixture_where' })).messages[0]!);
      expect(where).toMatch(/^thread [1-9]\d*, mode general$/);
      const picture = await client.getPrompt({ name: 'fixture_picture' });
      expect(picture.messages.map((message) => message.content.type)).toEqual(['image', 'resource']);

      const uris = (await client.listResources()).resources.map((resource) => resource.uri);
      expect(uris).toEqual(
        expect.arrayContaining(['fixture://docs/readme', 'fixture://logo.png', 'fixture://counter']),
      );
      const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      expect(templates).toContain('fixture://users/{id}');
      // Bytes cross from the worker as bytes, and go out as base64.
      await readsFixtureDocuments(client);
      // A complete function runs in the worker; a union of literals completes from the schema.
      const users = await client.complete({
        ref: { type: 'ref/resource', uri: 'fixture://users/{id}' },
        argument: { name: 'id', value: 'a' },
      });
      expect(users.completion.values).toEqual(['ada', 'alan']);
      const styles = await client.complete({
        ref: { type: 'ref/prompt', name: 'fixture_greeting' },
        argument: { name: 'style', value: 'f' },
      });
      expect(styles.completion).toEqual({ values: ['formal'], total: 1, hasMore: false });
    } finally {
      await client.close();
    }
  });

  it('answers hostile units with the errors a package in process gets, and keeps serving (2026-07-28 client)', async () => {
    const client = await v2();
    try {
      await expect(client.getPrompt({ name: 'fixture_greeting', arguments: { style: 'shouty' } })).rejects.toThrow(
        /refused its arguments/,
      );
      const thrown = await client.getPrompt({ name: 'fixture_throws' }).then(
        () => undefined,
        (error: Error) => error,
      );
      // The same message as in process: what the render threw, no stack trace, nothing of the worker.
      expect(thrown?.message).toMatch(/Prompt "fixture_throws" failed: Error: the template store is down/);
      expect(thrown?.message).not.toMatch(/at .*index\.js|WorkerUnitError/);
      await expect(client.getPrompt({ name: 'fixture_hangs' })).rejects.toThrow(/did not answer within 300 ms/);
      await expect(client.readResource({ uri: 'fixture://big' })).rejects.toThrow(
        /larger than \d+ bytes; nothing was sent/,
      );
      await expect(client.getPrompt({ name: 'fixture_uncloneable' })).rejects.toThrow(
        /Prompt "fixture_uncloneable" failed: it returned a value that cannot be sent from its isolated worker/,
      );
      await expect(client.readResource({ uri: 'fixture://users/..' })).rejects.toThrow(/Unknown resource|segment/);
      expect((await client.readResource({ uri: 'fixture://docs/readme' })).contents).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('hears a subscribed resource change that a tool call makes in a worker', async () => {
    const client = await v1();
    try {
      // The bump runs in a worker thread: its change is heard on one of the session's next requests.
      await hearsCounterUpdates(client, true);
    } finally {
      await client.close();
    }
  });

  it('fails a render that keeps its thread busy at the time limit, replaces that worker, and renders on', async () => {
    const client = await v1();
    try {
      await expect(client.getPrompt({ name: 'fixture_spins' })).rejects.toThrow(
        /Prompt "fixture_spins" did not answer within 300 ms/,
      );
      await vi.waitFor(() => expect(suite.host.output()).toMatch(/replacing a worker that stayed busy/), {
        timeout: 10_000,
      });
      await vi.waitFor(() => expect(suite.host.output()).toMatch(/a fresh worker is ready/), { timeout: 30_000 });
      const got = await client.getPrompt({ name: 'fixture_greeting', arguments: { name: 'Alan' } });
      expect(textOf(got.messages[0]!)).toBe('Greet Alan in a casual style.');
    } finally {
      await client.close();
    }
  });
});
