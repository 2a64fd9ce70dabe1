import {
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { UnitErrorCode, type UnitOutcome } from '@aptix/tool-contract';
import type { AptixHost } from '../aptix-host.js';
import { ScopeError } from '../host-api.js';
import type { HostUnits, UnitScope } from '../units/host-units.js';
import { hostUnits, unitScope } from '../units/unit-scope.js';
import { promptListing, resourceListing, templateListing } from '../units/unit-listings.js';
import type { McpScope } from './mcp-scope.js';
import { legacySubscriptions } from './unit-subscriptions.js';
import { getPrompt } from './prompt-input.js';
import { announceUnitChanges, listedUnits } from './unit-notifications.js';

/** The capabilities for prompts, resources and completions: advertised only when the host has some to serve. */
export function unitCapabilities(host: AptixHost): ServerCapabilities {
  const units = hostUnits(host);
  if (units === undefined) return {};
  // A package that follows its units (a bridged MCP server) may add the first of a kind later.
  const listChanged = units.mayChange;
  const prompts = units.prompts.size > 0 || listChanged;
  const resources = units.resources.size > 0 || listChanged;
  return {
    ...(prompts ? { prompts: { listChanged } } : {}),
    // 2025 revisions: resources/subscribe; 2026-07-28: resourceSubscriptions on subscriptions/listen.
    ...(resources ? { resources: { subscribe: units.subscribable, listChanged } } : {}),
    ...(prompts || units.resources.templates().length > 0 ? { completions: {} } : {}),
  };
}

/** A failed unit request as the JSON-RPC error MCP expects: unknown or invalid input is -32602, a missing resource -32002 (the SDK maps it for 2026-07-28). */
function refuse(outcome: Extract<UnitOutcome<unknown>, { ok: false }>, uri?: string): never {
  const code =
    outcome.code === UnitErrorCode.RESOURCE_NOT_FOUND
      ? ProtocolErrorCode.ResourceNotFound
      : outcome.code === UnitErrorCode.PROMPT_NOT_FOUND ||
          outcome.code === UnitErrorCode.INVALID_ARGUMENTS ||
          outcome.code === UnitErrorCode.INVALID_URI
        ? ProtocolErrorCode.InvalidParams
        : ProtocolErrorCode.InternalError;
  throw new ProtocolError(code, outcome.message, { code: outcome.code, ...(uri === undefined ? {} : { uri }) });
}

/** The mode a scope's prompts and resources come from: a 2025 session's current mode, else the endpoint's. */
async function scopeOf(host: AptixHost, scope: McpScope): Promise<UnitScope> {
  try {
    if (scope.era === 'legacy' && scope.agentSessionId !== undefined)
      return await unitScope(host, { sessionId: scope.agentSessionId }, scope.actor);
    return await unitScope(host, { mode: scope.listMode }, scope.actor);
  } catch (error) {
    if (error instanceof ScopeError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    throw error;
  }
}

/**
 * Serves the host's prompts and resources on one server instance: `prompts/list`, `prompts/get`,
 * `resources/list`, `resources/templates/list`, `resources/read`, `completion/complete`, and on 2025
 * revisions `resources/subscribe` and `resources/unsubscribe` (2026-07-28 subscribes on
 * `subscriptions/listen`, which the HTTP entry serves; see mcp-http.ts).
 */
export function registerUnitMethods(server: Server, host: AptixHost, scope: McpScope): void {
  const units = hostUnits(host);
  if (units === undefined) return;
  const subscriptions = scope.era === 'legacy' ? legacySubscriptions(units, server, scope) : undefined;
  const prepare = async (ctx: ServerContext) => {
    await subscriptions?.deliver(ctx);
    await announceUnitChanges(host, scope, ctx);
    return scopeOf(host, scope);
  };
  const { prompts, resources } = unitCapabilities(host);
  if (prompts !== undefined) {
    server.setRequestHandler('prompts/list', async (_request, ctx) => {
      const seen = await prepare(ctx);
      listedUnits(host, scope, 'prompt');
      return {
        prompts: units.promptsIn(seen).map(promptListing),
      };
    });
    server.setRequestHandler('prompts/get', async (request, ctx) => {
      const seen = await prepare(ctx);
      // A prompt may ask the client first, as a tool does (prompt-input.ts): then the answer is input_required.
      const rendered = await getPrompt(host, units, scope, server, request.params, seen, ctx);
      if ('ask' in rendered) return rendered.ask as never;
      if (!rendered.ok) refuse(rendered);
      return rendered.value as never;
    });
  }
  if (resources === undefined) return registerCompletion(server, units, host, scope, prepare);
  server.setRequestHandler('resources/list', async (_request, ctx) => {
    const seen = await prepare(ctx);
    listedUnits(host, scope, 'resource');
    return {
      resources: units
        .resourcesIn(seen)
        .map(({ resource, uri, name, title }) => resourceListing(resource, uri, name, title)),
    };
  });
  server.setRequestHandler('resources/templates/list', async (_request, ctx) => {
    const seen = await prepare(ctx);
    listedUnits(host, scope, 'resource');
    return {
      resourceTemplates: units.templatesIn(seen).map(templateListing),
    };
  });
  server.setRequestHandler('resources/read', async (request, ctx) => {
    const seen = await prepare(ctx);
    const read = await units.read(request.params.uri, seen, ctx.mcpReq.signal);
    if (!read.ok) refuse(read, request.params.uri);
    return { contents: read.value as never };
  });
  if (subscriptions !== undefined) {
    server.setRequestHandler('resources/subscribe', async (request, ctx) => {
      const seen = await prepare(ctx);
      const uri = request.params.uri;
      if (units.resolve(uri, seen) === undefined)
        refuse(
          {
            ok: false,
            code: UnitErrorCode.RESOURCE_NOT_FOUND,
            message: `Unknown resource: ${JSON.stringify(String(uri).slice(0, 200))} in mode "${seen.mode}".`,
          },
          uri,
        );
      const problem = subscriptions.subscribe(uri);
      if (problem !== undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, problem, { uri });
      return {};
    });
    server.setRequestHandler('resources/unsubscribe', async (request, ctx) => {
      await prepare(ctx);
      subscriptions.unsubscribe(request.params.uri);
      return {};
    });
  }
  registerCompletion(server, units, host, scope, prepare);
}

function registerCompletion(
  server: Server,
  units: HostUnits,
  host: AptixHost,
  scope: McpScope,
  prepare: (ctx: ServerContext) => Promise<UnitScope>,
): void {
  if (unitCapabilities(host).completions === undefined) return;
  server.setRequestHandler('completion/complete', async (request, ctx) => {
    const seen = await prepare(ctx);
    const { ref, argument, context } = request.params;
    const target =
      ref.type === 'ref/prompt'
        ? { kind: 'prompt' as const, name: ref.name }
        : { kind: 'resource' as const, name: (ref as { uri: string }).uri };
    const completed = await units.complete(
      target,
      argument.name,
      argument.value,
      context?.arguments ?? {},
      seen,
      ctx.mcpReq.signal,
    );
    if (!completed.ok) refuse(completed);
    return { completion: completed.value };
  });
}
