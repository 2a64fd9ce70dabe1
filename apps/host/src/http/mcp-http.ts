import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AnyFastifyInstance } from './server.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AptixHost } from '../aptix-host.js';
import { createMcpServer } from '../mcp/mcp-server.js';

/** The header a client sends to continue an agent session (and that the host answers with). */
export const AGENT_SESSION_HEADER = 'x-aptix-session-id';

interface LiveSession {
  readonly transport: StreamableHTTPServerTransport;
  readonly agentSessionId: string;
}

/**
 * MCP over Streamable HTTP at `/mcp`, mounted in Fastify with `reply.hijack()`. Each MCP session is
 * bound to a persisted agent session: a new one, or the one named by `X-Aptix-Session-Id` on
 * `initialize`. The binding is stored, so a host that does not know an MCP session id can say which
 * agent session to continue in.
 */
export function registerMcpRoutes(app: AnyFastifyInstance, host: AptixHost, version: string): { close(): Promise<void> } {
  const live = new Map<string, LiveSession>();

  const refuse = (reply: FastifyReply, status: number, code: number, message: string) =>
    reply.code(status).send({ jsonrpc: '2.0', error: { code, message }, id: null });

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const mcpSessionId = request.headers['mcp-session-id'];
    if (typeof mcpSessionId === 'string') {
      const session = live.get(mcpSessionId);
      if (session === undefined) {
        const agentSessionId = await host.cradle.sessionManager.getMcpBinding(mcpSessionId);
        const hint = agentSessionId
          ? ` It was bound to agent session ${agentSessionId}: initialize a new MCP session with the header "X-Aptix-Session-Id: ${agentSessionId}" to continue in it.`
          : '';
        return refuse(reply, 404, -32001, `MCP session ${mcpSessionId} is not open on this host.${hint}`);
      }
      reply.hijack();
      reply.raw.setHeader(AGENT_SESSION_HEADER, session.agentSessionId);
      await session.transport.handleRequest(request.raw, reply.raw, request.body);
      return reply;
    }
    if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
      return refuse(reply, 400, -32000, 'No MCP session: send an initialize request first (without an Mcp-Session-Id header).');
    }
    const requested = request.headers[AGENT_SESSION_HEADER];
    let agentSessionId: string;
    if (typeof requested === 'string' && requested !== '') {
      const existing = await host.getSession(requested);
      if (existing === undefined) return refuse(reply, 404, -32002, `Agent session ${requested} does not exist. Omit ${AGENT_SESSION_HEADER} to start a new one.`);
      agentSessionId = existing.id;
    } else {
      agentSessionId = (await host.createSession()).id;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: async (id) => {
        live.set(id, { transport, agentSessionId });
        await host.cradle.sessionManager.bindMcpSession(id, agentSessionId);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) live.delete(transport.sessionId);
    };
    const server = createMcpServer(host, { agentSessionId }, version);
    await server.connect(transport);
    reply.hijack();
    reply.raw.setHeader(AGENT_SESSION_HEADER, agentSessionId);
    await transport.handleRequest(request.raw, reply.raw, request.body);
    return reply;
  };

  const routeOptions = { schema: { hide: true } };
  app.post('/mcp', routeOptions, handle);
  app.get('/mcp', routeOptions, handle);
  app.delete('/mcp', routeOptions, handle);

  return {
    async close() {
      await Promise.allSettled([...live.values()].map((session) => session.transport.close()));
      live.clear();
    },
  };
}
