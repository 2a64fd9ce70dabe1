/**
 * A bridge entry loaded with `isolation: "worker"` offers its server's prompts and resources (issue 37):
 * the real @modelcontextprotocol/server-everything over stdio, started by the bridge in the worker,
 * bridged into a real `aptix serve`, and read through the real v2 SDK client. The render and the read
 * go from the host to the worker, and from there to the server.
 */
import { describe, expect, it } from 'vitest';
import { bridgesEverythingUnits, configuredHostForSuite, connectV2, EVERYTHING, FIRST_PARTY } from './mcp-host.js';

const suite = configuredHostForSuite(
  {
    toolPackages: [
      ...FIRST_PARTY,
      {
        package: '@aptix/tool-mcp-bridge',
        isolation: 'worker',
        workers: 1,
        options: { name: 'everything', stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      },
    ],
  },
  90_000,
);

describe("an isolated bridge's prompts and resources", () => {
  it('are listed, rendered and read through the worker and the server', async () => {
    const client = await connectV2(`${suite.host.url}/mcp`, 'isolated-bridge-units', 'auto');
    try {
      await bridgesEverythingUnits(client);
      const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/3' });
      expect(dynamic.contents[0]!.uri).toBe('demo://resource/dynamic/text/3');
    } finally {
      await client.close();
    }
  });
});
