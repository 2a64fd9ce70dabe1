import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { InvokeResult } from '@aptix/tool-contract';
import type { AptixHost } from '../aptix-host.js';

export interface McpBinding {
  /** The persisted agent session this MCP session works in: its mode decides the tools offered. */
  readonly agentSessionId: string;
}

const MODE_CHANGE_TOOL = 'agent_change_mode';

/**
 * An MCP server over the host, bound to one agent session. `tools/list` gives the session's current
 * mode's tools, read from the store on every request; a successful mode change announces
 * `notifications/tools/list_changed`. `notifications/cancelled` aborts the tool's signal.
 */
export function createMcpServer(host: AptixHost, binding: McpBinding, version: string): Server {
  const server = new Server(
    { name: 'aptix', version },
    {
      capabilities: { tools: { listChanged: true } },
      instructions: `Aptix tools for agent session ${binding.agentSessionId}. The tools offered depend on the session's mode; use agent_list_modes to see the modes and agent_change_mode (after the user agrees) to switch.`,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const tools = await host.definitions('mcp', { sessionId: binding.agentSessionId });
    return { tools: tools as never };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    const outcome = await host.call(name, args ?? {}, { sessionId: binding.agentSessionId, signal: extra.signal });
    if (outcome.kind !== 'result') return { content: [{ type: 'text', text: outcome.message }], isError: true };
    const { result } = outcome;
    if (!result.successful) return { content: [{ type: 'text', text: InvokeResult.errorMessage(result) }], isError: true };
    if (name === MODE_CHANGE_TOOL) await server.sendToolListChanged();
    const parsed: unknown = JSON.parse(result.result);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? { content: [{ type: 'text', text: result.result }], structuredContent: parsed as Record<string, unknown> }
      : { content: [{ type: 'text', text: result.result }] };
  });

  return server;
}
