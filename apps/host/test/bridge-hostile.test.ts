/**
 * Issue 33, 5, in a real `aptix serve`: a bridged MCP server that lists tools that are not valid MCP
 * tools (an inputSchema that is not an object, or none) no longer fails start-up; each is skipped with
 * a log line naming it, and the options' `approval: "destructive"` gates the server's write tools.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoke, writeConfig } from './hostile.js';
import { logLine, scratch, startHost, type RunningHost } from './support.js';

const require = createRequire(import.meta.url);
const HOSTILE_SERVER = join(
  dirname(require.resolve('@aptix/tool-mcp-bridge/package.json')),
  'test',
  'fixtures',
  'hostile-server.mjs',
);

describe('aptix serve with a bridged server listing invalid tools, write tools gated by configuration', () => {
  const space = scratch();
  let host: RunningHost;
  beforeAll(async () => {
    const bridge = {
      package: '@aptix/tool-mcp-bridge',
      startupTimeoutMs: 60_000,
      options: {
        name: 'hostile',
        prefix: 'h',
        connectTimeoutMs: 30_000,
        stdio: { command: process.execPath, args: [HOSTILE_SERVER] },
        approval: 'destructive',
      },
    };
    host = await startHost({ args: ['--config', writeConfig(space.dir, 'bridge-hostile', [bridge])] });
  }, 90_000);
  afterAll(async () => {
    await host?.stop();
    space.cleanup();
  });

  it('starts, skipping each invalid tool with a line naming it', async () => {
    for (const name of ['string-schema', 'no-schema', 'array-schema']) {
      const line = await logLine(
        host,
        (entry) =>
          entry.tag === '[McpBridge_ToolSkipped]' &&
          String(entry.msg).includes(`its tool "${name}" is not offered: its definition is not a valid MCP tool`),
      );
      expect(line.msg).toContain('MCP server "hostile"');
    }
    const listed = (await (await fetch(`${host.url}/v1/tools`)).json()) as { tools: Array<{ name: string }> };
    expect(
      listed.tools
        .map((tool) => tool.name)
        .filter((name) => name.startsWith('h_'))
        .sort(),
    ).toEqual(['h_append', 'h_plain', 'h_read', 'h_write']);
  });

  it('runs the read-only tool at once, and makes the destructive ones wait for a person', async () => {
    expect((await invoke(host, 'h_read', { text: 'x' })).body).toMatchObject({ successful: true });
    for (const name of ['h_write', 'h_plain']) {
      const response = await fetch(`${host.url}/v1/tools/${name}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: { text: 'x' } }),
      });
      expect(response.status).toBe(202);
      expect(await response.json()).toMatchObject({ status: 'pending_approval', toolName: name });
    }
    expect((await invoke(host, 'testing_calculator', { operation: 'add', a: 2, b: 3 })).body.result.value).toBe(5);
  });
});
