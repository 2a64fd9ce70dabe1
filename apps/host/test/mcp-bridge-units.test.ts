/**
 * A bridged MCP server's prompts and resources reach a host's own MCP clients: the real
 * @modelcontextprotocol/server-everything over stdio, bridged into a real `aptix serve`, read through
 * the real v1 (2025) and v2 (2026-07-28) SDK clients, under the bridge's prefix and modes.
 */
import { describe, expect, it } from 'vitest';
import {
  bridgesEverythingUnits,
  configuredHostForSuite,
  connectV1,
  connectV2,
  EVERYTHING,
  FIRST_PARTY,
} from './mcp-host.js';

const suite = configuredHostForSuite(
  {
    toolPackages: [
      ...FIRST_PARTY,
      {
        package: '@aptix/tool-mcp-bridge',
        options: {
          name: 'everything',
          modes: ['tool_diagnostics'],
          stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        },
      },
    ],
  },
  90_000,
);

describe("a bridged server's prompts and resources, served by the host", () => {
  it('2026-07-28 (v2 client): listed in the mode the bridge names only, rendered and read through the server', async () => {
    const client = await connectV2(`${suite.host.url}/modes/tool_diagnostics/mcp`, 'bridge-units-v2', 'auto');
    const general = await connectV2(`${suite.host.url}/modes/general/mcp`, 'bridge-units-v2', 'auto');
    try {
      await bridgesEverythingUnits(client);
      expect((await general.listPrompts()).prompts.map((prompt) => prompt.name)).not.toContain(
        'everything_args_prompt',
      );
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
    const client = await connectV1(`${suite.host.url}/modes/tool_diagnostics/mcp`, 'bridge-units-v1');
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
