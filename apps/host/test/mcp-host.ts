/**
 * The set-up the MCP tests share: one configured `aptix serve` per test file, real SDK clients of both
 * generations connected to it, and the real @modelcontextprotocol/server-everything for the bridge tests.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { BIN, HOST_ROOT, startHostWithConfig, type RunningHost } from './support.js';

/** The first-party packages every configured test host loads. */
export const FIRST_PARTY: readonly string[] = [
  '@aptix/tool-samples',
  '@aptix/tool-mode-catalog',
  '@aptix/tool-mode-change',
];

const require = createRequire(import.meta.url);
const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json');
/** The script of the real @modelcontextprotocol/server-everything (run it with `node <EVERYTHING> stdio`). */
export const EVERYTHING = join(
  dirname(manifest),
  (require(manifest) as { bin: Record<string, string> }).bin['mcp-server-everything']!,
);

/**
 * One `aptix serve` with these configuration-file fields on a scratch SQLite store, for the test file:
 * started before its tests (within `startMs`), stopped and its files removed after them. Read `.host`
 * inside the tests.
 */
export function configuredHostForSuite(
  fields: Record<string, unknown>,
  startMs?: number,
): { readonly host: RunningHost } {
  let host: RunningHost | undefined;
  let cleanup = (): void => undefined;
  beforeAll(async () => {
    const started = await startHostWithConfig(fields);
    host = started.host;
    cleanup = () => started.space.cleanup();
  }, startMs);
  afterAll(async () => {
    await host?.stop();
    cleanup();
  });
  return {
    get host() {
      if (host === undefined) throw new Error('the host starts in beforeAll: use it inside a test');
      return host;
    },
  };
}

/** A v1 SDK client (2025 revisions), connected to `url` (the host's URL and an MCP path); pass `client` to set it up first. */
export async function connectV1(url: string, client: V1Client | string): Promise<V1Client> {
  const connected = typeof client === 'string' ? new V1Client({ name: client, version: '1' }) : client;
  await connected.connect(new V1Transport(new URL(url)));
  return connected;
}

/** A v1 SDK client connected over stdio to `aptix mcp` with this configuration file and store (a 2025 connection). */
export async function connectStdio(client: V1Client, file: string, db: string): Promise<V1Client> {
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--config', file, 'mcp'],
      cwd: HOST_ROOT,
      env: { ...process.env, APTIX_DB: db, LOG_LEVEL: 'warn' } as Record<string, string>,
      stderr: 'pipe',
    }),
  );
  return client;
}

/** A v2 SDK client connected to `url`, pinned to 2026-07-28 unless told to negotiate (`'auto'`). */
export async function connectV2(url: string, name: string, mode: 'auto' | 'pin' = 'pin'): Promise<Client> {
  const client = new Client(
    { name, version: '1' },
    { versionNegotiation: { mode: mode === 'auto' ? 'auto' : { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/**
 * A v1 client subscribed to fixture://counter hears notifications/resources/updated when fixture_bump
 * changes it, and nothing after unsubscribing; fixture://docs/readme, which has no subscribe hook, is
 * refused. The update rides on the session's next request (Streamable HTTP here has no standalone
 * stream): on that very request, or, with `eventually` (a change made in another thread), within
 * vi.waitFor's retries.
 */
export async function hearsCounterUpdates(client: V1Client, eventually = false): Promise<void> {
  const heard: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    heard.push(notification.params.uri);
  });
  await client.subscribeResource({ uri: 'fixture://counter' });
  await expect(client.subscribeResource({ uri: 'fixture://docs/readme' })).rejects.toThrow(
    /declares no subscribe hook/,
  );
  await client.callTool({ name: 'fixture_bump', arguments: {} });
  const hearsIt = async () => {
    await client.readResource({ uri: 'fixture://counter' });
    expect(heard).toEqual(['fixture://counter']);
  };
  if (eventually) await vi.waitFor(hearsIt);
  else await hearsIt();
  await client.unsubscribeResource({ uri: 'fixture://counter' });
  await client.callTool({ name: 'fixture_bump', arguments: {} });
  await client.readResource({ uri: 'fixture://counter' });
  expect(heard).toEqual(['fixture://counter']);
}

/** What the resource checks below need of a client (the v1 and the v2 SDK's alike). */
interface ResourceReader {
  readResource(params: { uri: string }): Promise<{ contents: unknown[] }>;
}

/** The unit-tools fixture's (test/fixtures/unit-tools, and isolated-units, which holds its units) documents read as they are: text, bytes as base64, a template's percent-decoded variable. */
export async function readsFixtureDocuments(client: ResourceReader): Promise<void> {
  expect((await client.readResource({ uri: 'fixture://docs/readme' })).contents).toEqual([
    { uri: 'fixture://docs/readme', mimeType: 'text/markdown', text: '# Readme\n\nHello.' },
  ]);
  expect((await client.readResource({ uri: 'fixture://logo.png' })).contents).toEqual([
    { uri: 'fixture://logo.png', mimeType: 'image/png', blob: 'iVBORw==' },
  ]);
  expect((await client.readResource({ uri: 'fixture://users/ada%20l' })).contents).toEqual([
    {
      uri: 'fixture://users/ada%20l',
      mimeType: 'application/json',
      text: '{"uri":"fixture://users/ada%20l","id":"ada l"}',
    },
  ]);
}

/** A bridged server-everything's prompts are listed, `everything_args_prompt` renders its argument, and its architecture document reads as markdown. */
export async function bridgesEverythingUnits(client: Client): Promise<void> {
  const names = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
  expect(names).toEqual(expect.arrayContaining(['everything_simple_prompt', 'everything_args_prompt']));
  const rendered = await client.getPrompt({ name: 'everything_args_prompt', arguments: { city: 'Lyon' } });
  expect(JSON.stringify(rendered.messages)).toContain('Lyon');
  const read = await client.readResource({ uri: 'demo://resource/static/document/architecture.md' });
  expect(read.contents[0]).toMatchObject({
    uri: 'demo://resource/static/document/architecture.md',
    mimeType: 'text/markdown',
  });
}

/** How prompts/list shows the unit-tools fixture's `fixture_greeting` (an optional argument is `required: false`). */
export const FIXTURE_GREETING_LISTED = {
  name: 'fixture_greeting',
  title: 'Greeting',
  description: 'Asks for a greeting of someone, in a style.',
  arguments: [
    { name: 'name', description: 'Who to greet.', required: true },
    { name: 'style', description: 'The style.', required: false },
  ],
};
