/**
 * A bridge entry loaded with `isolation: "worker"` offers its server's prompts and resources (issue 37):
 * the real @modelcontextprotocol/server-everything over stdio, started by the bridge in the worker,
 * bridged into a real `aptix serve`, and read through the real v2 SDK client. The render and the read
 * go from the host to the worker, and from there to the server.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostWithConfig, type RunningHost } from './support.js';

const require = createRequire(import.meta.url);
const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json');
const EVERYTHING = join(
  dirname(manifest),
  (require(manifest) as { bin: Record<string, string> }).bin['mcp-server-everything']!,
);

let host: RunningHost;
let cleanup: () => void = () => undefined;
beforeAll(async () => {
  const started = await startHostWithConfig({
    toolPackages: [
      '@aptix/tool-samples',
      '@aptix/tool-mode-catalog',
      '@aptix/tool-mode-change',
      {
        package: '@aptix/tool-mcp-bridge',
        isolation: 'worker',
        workers: 1,
        options: { name: 'everything', stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      },
    ],
  });
  host = started.host;
  cleanup = () => started.space.cleanup();
}, 90_000);
afterAll(async () => {
  await host?.stop();
  cleanup();
});

describe("an isolated bridge's prompts and resources", () => {
  it('are listed, rendered and read through the worker and the server', async () => {
    const client = new Client(
      { name: 'isolated-bridge-units', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`)));
    try {
      const names = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
      expect(names).toEqual(expect.arrayContaining(['everything_simple_prompt', 'everything_args_prompt']));
      const rendered = await client.getPrompt({ name: 'everything_args_prompt', arguments: { city: 'Lyon' } });
      expect(JSON.stringify(rendered.messages)).toContain('Lyon');
      const read = await client.readResource({ uri: 'demo://resource/static/document/architecture.md' });
      expect(read.contents[0]).toMatchObject({
        uri: 'demo://resource/static/document/architecture.md',
        mimeType: 'text/markdown',
      });
      const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/3' });
      expect(dynamic.contents[0]!.uri).toBe('demo://resource/dynamic/text/3');
    } finally {
      await client.close();
    }
  });
});
