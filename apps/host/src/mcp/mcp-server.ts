import { Server } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { AptixHost } from '../aptix-host.js';
import { LEGACY_TASKS_CAPABILITY, registerLegacyTaskMethods, registerTaskMethods, TASKS_EXTENSION } from './tasks.js';
import { ScopeHandlers } from './scope-handlers.js';
import { registerUnitMethods, unitCapabilities } from './unit-handlers.js';
import { followUnitChanges } from './unit-notifications.js';
import type { McpScope } from './mcp-scope.js';

export { MODE_CHANGE_TOOL } from './scope-handlers.js';
export type { McpScope } from './mcp-scope.js';

/** What the server tells the client about its tools and modes. */
function instructions(scope: McpScope, mode: string): string {
  const pair = scope.discovery
    ? ` After a mode change, find the new mode's tools with aptix_find_tools and call them with aptix_call_tool, passing the sessionId agent_change_mode returned.`
    : '';
  if (scope.era === 'legacy') {
    return (
      `Aptix tools for one agent session (over HTTP its id is in the X-Aptix-Session-Id response ` +
      `header). The tools offered depend on the session's mode; use agent_list_modes to see the ` +
      `modes and agent_change_mode (after the user agrees) to switch.${pair}`
    );
  }
  return (
    `Aptix tools of mode "${mode}". agent_list_modes lists the modes and agent_change_mode ` +
    `(after the user agrees) switches an agent session's ` +
    `mode.${pair || ' Each mode is also served at its own URL, /modes/<mode>/mcp.'}`
  );
}

/**
 * One validator for every server instance. Without it the SDK builds an Ajv instance per server, and
 * a server is built per request: 10,000 abandoned sessions then cost over 100 MiB of heap high-water.
 */
let sharedValidator: AjvJsonSchemaValidator | undefined;

/**
 * A v2 SDK server over the host, for one serving unit: one HTTP request, or one stdio connection.
 * The same factory serves both protocol eras (see {@link McpScope}).
 */
export function createMcpServer(host: AptixHost, scope: McpScope, version: string): Server {
  const mode = () => scope.listMode ?? 'the session mode';
  const server = new Server(
    { name: 'aptix', version },
    {
      // 2026-07-28: a list that can change (a package follows its tools) is announced on subscriptions/listen.
      capabilities: {
        tools: { listChanged: scope.era === 'legacy' || host.toolsMayChange },
        logging: {},
        // Prompts, resources and completions, when the host has some (see unit-handlers.ts).
        ...unitCapabilities(host),
        ...(scope.era === 'modern' ? { extensions: { [TASKS_EXTENSION]: {} } } : { tasks: LEGACY_TASKS_CAPABILITY }),
      },
      jsonSchemaValidator: (sharedValidator ??= new AjvJsonSchemaValidator()),
      // A 2026-07-28 list is a function of the endpoint and the loaded tool packages: fixed for the
      // process, unless a package can change its tools while the host runs (a bridged MCP server);
      // then no caching is promised.
      ...(host.toolsMayChange
        ? {}
        : { cacheHints: { 'tools/list': { ttlMs: 300_000, cacheScope: 'public' as const } } }),
      instructions: instructions(scope, mode()),
    },
  );

  const handlers = new ScopeHandlers(host, scope, server);
  server.setRequestHandler('tools/list', () => handlers.listTools());

  if (scope.era === 'legacy') {
    if (scope.longLived && host.toolsMayChange) {
      const stop = host.onToolsChanged(() => {
        if (scope.toolsRevision === host.toolsRevision) return;
        scope.toolsRevision = host.toolsRevision;
        server.notification({ method: 'notifications/tools/list_changed' }).catch(() => undefined);
      });
      const closed = server.onclose;
      server.onclose = () => {
        stop();
        closed?.();
      };
    }
    server.setRequestHandler('logging/setLevel', (request) => {
      scope.logLevel = request.params.level;
      return {};
    });
  }

  server.setRequestHandler('tools/call', (request, ctx) => handlers.callTool(request, ctx));
  registerUnitMethods(server, host, scope);
  followUnitChanges(host, scope, server);

  if (scope.era === 'modern') registerTaskMethods(server, host, scope.actor);
  else registerLegacyTaskMethods(server, host, scope.actor);

  return server;
}
