import { describe, expect, it } from 'vitest';
import { AgentToolExecutor, AgentToolRegistry, CapturingAdminLogger } from '@aptix/tool-contract';
import { BridgeErrorCode, close, createTools, McpBridge, McpBridgeError, parseBridgeOptions } from '../src/index.js';
import { CHANGING, EVERYTHING, freePort } from './servers.js';

describe('start-up', () => {
  it('createTools takes the options a host hands it and returns tool classes a registry accepts', async () => {
    const logger = new CapturingAdminLogger();
    const tools = await createTools({
      logger,
      options: {
        name: 'calc',
        stdio: { command: process.execPath, args: [CHANGING] },
        include: ['add'],
        modes: ['general', 'tool_diagnostics'],
      },
    });
    expect(tools.map((tool) => tool.ToolName)).toEqual(['calc_add']);
    expect((tools[0] as unknown as { McpServerName: string }).McpServerName).toBe('calc');
    // The modes join through the host's composable modes: each class declares them as its static Modes.
    expect(tools[0]!.Modes).toEqual(['general', 'tool_diagnostics']);
    const registry = new AgentToolRegistry();
    registry.registerTools(tools);
    expect(logger.events().find((event) => event.tag === '[McpBridge_ToolBridged]')?.message).toContain(
      '"add" is offered as calc_add, strict',
    );
    const executor = new AgentToolExecutor({ registry, logger });
    expect((await executor.execute('calc_add', '{"a":1,"b":1}')).successful).toBe(true);

    // A host that stops calls the package's close: every bridge createTools started is closed.
    await close();
    const after = await executor.execute('calc_add', '{"a":1,"b":1}');
    expect(after.errors[0]).toEqual({
      code: BridgeErrorCode.REMOTE_UNAVAILABLE,
      message: expect.stringContaining('the bridge to MCP server "calc" is closed'),
    });
  });

  it('stops with a message naming the server when its command cannot start', async () => {
    const error = await McpBridge.start(
      parseBridgeOptions({ name: 'missing', stdio: { command: '/nonexistent/mcp-server' } }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpBridgeError);
    expect((error as Error).message).toMatch(
      /^MCP server "missing" \(stdio: \/nonexistent\/mcp-server\) cannot be reached: .*ENOENT.*Fix: .*"optional": true/,
    );
  });

  it('stops with a message naming the server when nothing answers at its URL', async () => {
    const port = await freePort();
    const error = await McpBridge.start(
      parseBridgeOptions({ name: 'remote', http: { url: `http://127.0.0.1:${port}/mcp` }, connectTimeoutMs: 5_000 }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpBridgeError);
    expect((error as Error).message).toContain(
      `MCP server "remote" (Streamable HTTP: http://127.0.0.1:${port}/mcp) cannot be reached`,
    );
  });

  it('keeps a query string, where some servers take a key, out of its messages', async () => {
    const port = await freePort();
    const error = await McpBridge.start(
      parseBridgeOptions({
        name: 'remote',
        http: { url: `http://127.0.0.1:${port}/mcp?key=sk-in-the-query` },
        connectTimeoutMs: 5_000,
      }),
    ).catch((caught: unknown) => caught);
    expect((error as Error).message).toContain(`(Streamable HTTP: http://127.0.0.1:${port}/mcp?…)`);
    expect((error as Error).message).not.toContain('sk-in-the-query');
  });

  it('stops when a credential variable is unset, naming the variable and not a value', async () => {
    delete process.env.BRIDGE_TEST_UNSET_TOKEN;
    const error = await McpBridge.start(
      parseBridgeOptions({
        name: 'remote',
        http: {
          url: 'http://127.0.0.1:9/mcp',
          headers: { Authorization: { env: 'BRIDGE_TEST_UNSET_TOKEN', prefix: 'Bearer ' } },
        },
      }),
    ).catch((caught: unknown) => caught);
    expect((error as Error).message).toContain(
      'The environment variable BRIDGE_TEST_UNSET_TOKEN (for the header Authorization of MCP server "remote") is not set',
    );
  });

  it('skips a tool that cannot be offered with a logged reason, or stops start-up when told to', async () => {
    const logger = new CapturingAdminLogger();
    const bridge = await McpBridge.start(
      parseBridgeOptions({ name: 'everything', stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] } }),
      { logger },
    );
    await bridge.close();
    const skipped = logger.events().find((event) => event.tag === '[McpBridge_ToolSkipped]');
    expect(skipped?.message).toContain('"simulate-research-query" is not offered');
    const error = await McpBridge.start(
      parseBridgeOptions({
        name: 'everything',
        invalidTools: 'fail',
        stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      }),
    ).catch((caught: unknown) => caught);
    expect((error as Error).message).toContain('its tool "simulate-research-query" cannot be offered');
  });

  it('refuses a rename that makes two tools share a name', async () => {
    const error = await McpBridge.start(
      parseBridgeOptions({
        name: 'calc',
        stdio: { command: process.execPath, args: [CHANGING] },
        rename: { add: 'calc_sum', retire: 'calc_sum' },
      }),
    ).catch((caught: unknown) => caught);
    expect((error as Error).message).toContain('would both be called "calc_sum"');
  });
});
