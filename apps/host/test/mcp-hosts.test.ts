import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, postgresAvailable, scratch, startHost, type RunningHost } from './support.js';
import { hostPairOnPostgres } from './suites.js';

const available = await postgresAvailable('the MCP many-hosts test is');

function names(list: { tools: Array<{ name: string }> }): string[] {
  return list.tools.map((tool) => tool.name);
}

describe.skipIf(!available)('a 2025-era MCP session on two hosts that share one PostgreSQL database', () => {
  const pair = hostPairOnPostgres('aptix_mcp_hosts');

  it('is opened on one host and continued on the other, request by request, with no new initialize', async () => {
    const { a, b } = pair;
    // A round-robin load balancer: every request goes to the other host than the one before.
    const hosts = [new URL(a.url), new URL(b.url)];
    const served: string[] = [];
    let turn = 0;
    const roundRobin: typeof fetch = (input, init) => {
      const target = hosts[turn++ % 2]!;
      const url = new URL(input instanceof Request ? input.url : String(input));
      url.host = target.host;
      served.push(target.port);
      return fetch(url, init);
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { fetch: roundRobin });
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    await client.connect(transport);
    try {
      expect(names(await client.listTools())).not.toContain('testing_delay');
      const change = await client.callTool({ name: 'agent_change_mode', arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Across hosts.' } });
      expect(change.isError).toBeFalsy();
      expect(changed).toBe(1);
      expect(names(await client.listTools())).toContain('testing_delay');
      const delay = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
      expect(delay.isError).toBeFalsy();
      // Both hosts answered requests of the one session.
      expect(new Set(served)).toEqual(new Set([hosts[0]!.port, hosts[1]!.port]));
    } finally {
      await client.close();
    }
  });
});

describe('a 2025-era MCP session across a host restart', () => {
  const space = scratch();
  afterAll(() => space.cleanup());

  it('keeps working through the SDK client after the host is killed and started again on its port', async () => {
    const port = await freePort();
    const start = () => startHost({ env: { APTIX_DB: space.db }, args: ['--port', String(port)] });
    let host = await start();
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    const client = new Client({ name: 'aptix-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const sessionId = transport.sessionId;
      await client.callTool({ name: 'agent_change_mode', arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Before the crash.' } });
      expect(await host.stop('SIGKILL')).toBeNull();
      host = await start();
      // Same MCP session, no new initialize: the restarted host adopts it from the store.
      expect(names(await client.listTools())).toContain('testing_delay');
      const delay = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
      expect(delay.isError).toBeFalsy();
      expect(transport.sessionId).toBe(sessionId);
    } finally {
      await client.close();
      await host.stop();
    }
  });
});
