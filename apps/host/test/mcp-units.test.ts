/**
 * Prompts and resources over MCP (issue 37): a package's and the built-in ones, listed, rendered,
 * read and completed by the real v1 SDK client (2025 revisions) and the v2 client (2026-07-28), with
 * the modes deciding what is seen, subscriptions that hear changes, and every hostile unit bounded.
 */
import type { Client } from '@modelcontextprotocol/client';
import { describe, expect, it, vi } from 'vitest';
import {
  configuredHostForSuite,
  FIXTURE_GREETING_LISTED,
  connectV1,
  connectV2,
  hearsCounterUpdates,
  readsFixtureDocuments,
} from './mcp-host.js';
import { UNIT_PACKAGES } from './unit-fixture.js';

const suite = configuredHostForSuite({ toolPackages: UNIT_PACKAGES, unitTimeoutMs: 300 });
const v1 = (path = '/mcp') => connectV1(`${suite.host.url}${path}`, 'aptix-test-v1');
const v2 = (path = '/mcp') => connectV2(`${suite.host.url}${path}`, 'aptix-test-v2');

type AnyClient = Pick<
  Client,
  | 'listPrompts'
  | 'getPrompt'
  | 'listResources'
  | 'listResourceTemplates'
  | 'readResource'
  | 'complete'
  | 'getServerCapabilities'
>;

/** What both revisions must answer alike. */
async function servesUnits(client: AnyClient): Promise<void> {
  expect(client.getServerCapabilities()).toMatchObject({
    prompts: {},
    resources: { subscribe: true },
    completions: {},
  });
  const prompts = (await client.listPrompts()).prompts;
  const greeting = prompts.find((prompt) => prompt.name === 'fixture_greeting');
  expect(greeting).toEqual(FIXTURE_GREETING_LISTED);
  // Every mode's guidance is a prompt; a package's prompt for another mode is not seen here.
  expect(prompts.map((prompt) => prompt.name)).toEqual(
    expect.arrayContaining(['mode_general', 'mode_ddr_authoring', 'mode_tool_diagnostics']),
  );
  expect(prompts.map((prompt) => prompt.name)).not.toContain('fixture_diagnostics_only');

  const got = await client.getPrompt({ name: 'fixture_greeting', arguments: { name: 'Ada', style: 'formal' } });
  expect(got.messages).toEqual([
    { role: 'user', content: { type: 'text', text: 'Greet Ada in a formal style.' } },
    { role: 'assistant', content: { type: 'text', text: 'Understood.' } },
  ]);
  const mode = await client.getPrompt({ name: 'mode_general' });
  expect((mode.messages[0]!.content as { text: string }).text).toMatch(/^# Current mode: .* \(general\)/);
  const picture = await client.getPrompt({ name: 'fixture_picture' });
  expect(picture.messages.map((message) => message.content.type)).toEqual(['image', 'resource']);

  const resources = (await client.listResources()).resources;
  expect(resources.map((resource) => resource.uri)).toEqual(
    expect.arrayContaining([
      'fixture://docs/readme',
      'fixture://logo.png',
      'aptix://modes',
      'aptix://tools/fixture_bump/guide',
      'aptix://tools/agent_list_modes/guide',
    ]),
  );
  expect(resources.find((resource) => resource.uri === 'aptix://tools/fixture_bump/guide')).toMatchObject({
    mimeType: 'text/markdown',
  });
  const templates = (await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate);
  expect(templates).toEqual(expect.arrayContaining(['fixture://users/{id}', 'aptix://tools/{name}/guide']));

  await readsFixtureDocuments(client);
  const guide = (await client.readResource({ uri: 'aptix://tools/fixture_bump/guide' })).contents[0] as {
    text: string;
  };
  expect(guide.text).toMatch(/^fixture_bump/);
  const catalog = JSON.parse(
    ((await client.readResource({ uri: 'aptix://modes' })).contents[0] as { text: string }).text,
  );
  expect(catalog.modes.map((entry: { key: string }) => entry.key)).toEqual([
    'general',
    'ddr_authoring',
    'tool_diagnostics',
  ]);

  expect(
    (
      await client.complete({
        ref: { type: 'ref/prompt', name: 'fixture_greeting' },
        argument: { name: 'style', value: 'f' },
      })
    ).completion,
  ).toEqual({ values: ['formal'], total: 1, hasMore: false });
  expect(
    (
      await client.complete({
        ref: { type: 'ref/resource', uri: 'fixture://users/{id}' },
        argument: { name: 'id', value: 'a' },
      })
    ).completion.values,
  ).toEqual(['ada', 'alan']);
  expect(
    (
      await client.complete({
        ref: { type: 'ref/resource', uri: 'aptix://tools/{name}/guide' },
        argument: { name: 'name', value: 'fixture_' },
      })
    ).completion.values,
  ).toEqual(['fixture_bump']);
}

/** The hostile requests and units: each is a clear error for that request, and the host keeps serving. */
async function refusesAttacks(client: AnyClient): Promise<void> {
  const error = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (thrown: Error) => thrown,
    );
  await expect(client.getPrompt({ name: 'fixture_greting', arguments: { name: 'x' } })).rejects.toThrow(
    /Unknown prompt: "fixture_greting".*Did you mean "fixture_greeting"\?/,
  );
  await expect(client.getPrompt({ name: 'fixture_greeting', arguments: { style: 'shouty' } })).rejects.toThrow(
    /refused its arguments/,
  );
  const thrown = await error(client.getPrompt({ name: 'fixture_throws' }));
  expect(thrown?.message).toMatch(/Prompt "fixture_throws" failed: .*the template store is down/);
  expect(thrown?.message).not.toMatch(/at .*index\.js/);
  await expect(client.getPrompt({ name: 'fixture_hangs' })).rejects.toThrow(/did not answer within 300 ms/);
  await expect(client.readResource({ uri: 'fixture://docs/../secrets' })).rejects.toThrow(
    /"\." or "\.\." segment|Unknown resource/,
  );
  for (const uri of [
    'fixture://users/..',
    'fixture://users/%2e%2e',
    'fixture://users/a%2Fb',
    'fixture://users/%00',
    'fixture://users/a/b',
  ])
    await expect(client.readResource({ uri }), uri).rejects.toThrow(/Unknown resource|segment/);
  await expect(client.readResource({ uri: 'fixture://big' })).rejects.toThrow(
    /larger than \d+ bytes; nothing was sent/,
  );
  await expect(client.readResource({ uri: `fixture://users/${'x'.repeat(5000)}` })).rejects.toThrow(
    /characters long|Unknown resource/,
  );
  // A guide of a tool the mode does not offer is not there.
  await expect(client.readResource({ uri: 'aptix://tools/no_such_tool/guide' })).rejects.toThrow(/Unknown resource/);
  // Still serving.
  expect((await client.readResource({ uri: 'fixture://docs/readme' })).contents).toHaveLength(1);
}

describe('a 2025 client (the v1 SDK)', () => {
  it('lists, gets, reads and completes prompts and resources of the session mode', async () => {
    const client = await v1();
    try {
      await servesUnits(client as unknown as AnyClient);
    } finally {
      await client.close();
    }
  });

  it('gets a clear error for every hostile request and unit, and the host keeps serving', async () => {
    const client = await v1();
    try {
      await refusesAttacks(client as unknown as AnyClient);
    } finally {
      await client.close();
    }
  });

  it('hears notifications/resources/updated for a subscribed resource, and nothing after unsubscribing', async () => {
    const client = await v1();
    try {
      // In process, the update rides on the very next request.
      await hearsCounterUpdates(client);
    } finally {
      await client.close();
    }
  });

  it('sees the prompts of the mode its URL pins', async () => {
    const client = await v1('/modes/tool_diagnostics/mcp');
    try {
      expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain('fixture_diagnostics_only');
      expect((await client.getPrompt({ name: 'fixture_diagnostics_only' })).messages).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});

describe('a 2026-07-28 client (the v2 SDK)', () => {
  it('lists, gets, reads and completes prompts and resources of the endpoint mode', async () => {
    const client = await v2();
    try {
      await servesUnits(client);
    } finally {
      await client.close();
    }
  });

  it('gets a clear error for every hostile request and unit, and the host keeps serving', async () => {
    const client = await v2();
    try {
      await refusesAttacks(client);
    } finally {
      await client.close();
    }
  });

  it('hears a subscribed resource change on subscriptions/listen', async () => {
    const client = await v2();
    const heard: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      heard.push(notification.params.uri);
    });
    try {
      const subscription = await client.listen({ resourceSubscriptions: ['fixture://counter'] });
      expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['fixture://counter']);
      // The host starts watching once the listen request arrived; a bump before that is not heard.
      await vi.waitFor(
        async () => {
          await client.callTool({ name: 'fixture_bump', arguments: {} });
          expect(heard).toContain('fixture://counter');
        },
        { timeout: 10_000, interval: 100 },
      );
      await subscription.close();
    } finally {
      await client.close();
    }
  });
});
