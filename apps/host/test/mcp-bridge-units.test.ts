/**
 * A bridged MCP server's prompts and resources reach a host's own MCP clients: the real
 * @modelcontextprotocol/server-everything over stdio, bridged into a real `aptix serve`, read through
 * the real v1 (2025) and v2 (2026-07-28) SDK clients, under the bridge's prefix and modes.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
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
        options: {
          name: 'everything',
          modes: ['tool_diagnostics'],
          stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        },
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

describe("a bridged server's prompts and resources, served by the host", () => {
  it('2026-07-28 (v2 client): listed in the mode the bridge names only, rendered and read through the server', async () => {
    const client = new Client({ name: 'bridge-units-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/modes/tool_diagnostics/mcp`)));
    const general = new Client({ name: 'bridge-units-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await general.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/modes/general/mcp`)));
    try {
      const names = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
      expect(names).toEqual(expect.arrayContaining(['everything_simple_prompt', 'everything_args_prompt']));
      expect((await general.listPrompts()).prompts.map((prompt) => prompt.name)).not.toContain(
        'everything_args_prompt',
      );
      const rendered = await client.getPrompt({ name: 'everything_args_prompt', arguments: { city: 'Lyon' } });
      expect(JSON.stringify(rendered.messages)).toContain('Lyon');
      const read = await client.readResource({ uri: 'demo://resource/static/document/architecture.md' });
      expect(read.contents[0]).toMatchObject({
        uri: 'demo://resource/static/document/architecture.md',
        mimeType: 'text/markdown',
      });
      const templates = (await client.listResourceTemplates()).resourceTemplates.map(
        (template) => template.uriTemplate,
      );
      expect(templates).toContain('demo://resource/dynamic/text/{resourceId}');
    } finally {
      await client.close();
      await general.close();
    }
  });

  it('2025 (v1 client): the same prompt and a template resource', async () => {
    const client = new LegacyClient({ name: 'bridge-units-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(`${host.url}/modes/tool_diagnostics/mcp`)));
    try {
      const rendered = await client.getPrompt({ name: 'everything_args_prompt', arguments: { city: 'Nantes' } });
      expect(JSON.stringify(rendered.messages)).toContain('Nantes');
      const read = await client.readResource({ uri: 'demo://resource/dynamic/text/3' });
      expect(read.contents[0]!.uri).toBe('demo://resource/dynamic/text/3');
    } finally {
      await client.close();
    }
  });
});
