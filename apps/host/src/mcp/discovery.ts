import type { CallToolRequestParams, CallToolResult } from '@modelcontextprotocol/server';
import { CALL_TOOL, FIND_TOOLS, metaToolDefinitions, readCallArguments, readFindArguments } from '@aptix/tool-search';
import type { McpToolDefinition } from '@aptix/tool-contract';
import { ALWAYS_OFFERED_TOOLS } from '@aptix/tool-mode-catalog';
import type { AptixHost } from '../aptix-host.js';
import type { McpScope } from './mcp-scope.js';

/**
 * The stable tool surface at `/mcp` (and `aptix mcp`): besides the endpoint's mode's tools, the
 * `aptix_find_tools` / `aptix_call_tool` pair, through which a model reaches the tools of the mode its
 * agent session is in now. A 2026-07-28 list may not follow a session's mode (SEP-2567), and most
 * frameworks build their tool set from one listing, so after `agent_change_mode` the new mode's tools
 * are found and called through the pair, with the session's id passed back as an argument: the
 * handle pattern of the specification. See docs/mcp.md.
 */

export { CALL_TOOL, FIND_TOOLS } from '@aptix/tool-search';

function errorText(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

const listed = new WeakMap<readonly unknown[], readonly McpToolDefinition[]>();

/** A scope's listing with the pair after the mode's tools; the registry's frozen list is the key, so each list is built once. */
export function withDiscovery(tools: readonly McpToolDefinition[]): readonly McpToolDefinition[] {
  const all = listed.get(tools) ?? Object.freeze([...tools, ...metaToolDefinitions('mcp')]);
  listed.set(tools, all);
  return all;
}

const deferredListings = new WeakMap<readonly unknown[], readonly McpToolDefinition[]>();

/**
 * A deferred mode's listing (`deferredModes`): its mode tools (agent_list_modes, agent_change_mode)
 * and the pair, in place of a list too large to send; the mode's full list is the key.
 */
export function deferredListing(tools: readonly McpToolDefinition[]): readonly McpToolDefinition[] {
  const listing =
    deferredListings.get(tools) ??
    Object.freeze([
      ...tools.filter((tool) => (ALWAYS_OFFERED_TOOLS as readonly string[]).includes(tool.name)),
      ...metaToolDefinitions('mcp'),
    ]);
  deferredListings.set(tools, listing);
  return listing;
}

/** Whether this scope serves the pair: `/mcp` and `aptix mcp` always, a mode's own URL or a 2025 session when its mode is deferred. */
export async function servesPair(host: AptixHost, scope: McpScope): Promise<boolean> {
  if (scope.discovery === true) return true;
  if (host.deferredModes === false) return false;
  const mode =
    scope.era === 'modern' || scope.agentSessionId === undefined
      ? scope.listMode
      : await host.sessionMode(scope.agentSessionId);
  return mode !== undefined && host.isDeferred(mode);
}

/** The agent session a pair's call works in: the one its arguments name, else the scope's; and the mode that session (or the endpoint) is in. */
async function whereTo(
  host: AptixHost,
  scope: McpScope,
  named: string | undefined,
): Promise<{ sessionId: string | undefined; mode: string } | { refused: string }> {
  const sessionId = named ?? scope.agentSessionId;
  if (sessionId === undefined) return { sessionId, mode: scope.listMode ?? host.cradle.modeCatalog.defaultMode.key };
  // Another principal's session is as unknown as a missing one.
  const mode = await host.sessionMode(sessionId, scope.actor);
  if (mode === undefined) {
    return {
      refused:
        `Agent session "${sessionId}" does not exist. Use the sessionId that agent_change_mode ` +
        `returned, or leave sessionId out (null) to work in the default mode; agent_change_mode ` +
        `without one starts a new session.`,
    };
  }
  return { sessionId, mode };
}

/** `aptix_find_tools`: the tools of the session's current mode (or the endpoint's) that fit the query. */
export async function findTools(host: AptixHost, scope: McpScope, raw: unknown): Promise<CallToolResult> {
  const read = readFindArguments(raw ?? {});
  if (!read.ok) return errorText(read.message);
  const where = await whereTo(host, scope, read.value.sessionId);
  if ('refused' in where) return errorText(where.refused);
  // A principal finds only the tools it may call: they are left out before the limit is taken, and from the count.
  const actor = scope.actor;
  const visible = actor === undefined ? undefined : (name: string) => host.permissions.mayCall(actor, name);
  const found = (await host.finder(where.mode)).find(read.value, where.sessionId ?? null, visible);
  return { content: [{ type: 'text', text: JSON.stringify(found) }] };
}

/**
 * `aptix_call_tool`'s call, unwrapped: the tool and arguments it names, and the scope it runs in (the
 * session its arguments name), for the handlers to run as a direct call of that tool; or the refusal
 * of a call whose arguments are wrong. The session and its mode are checked once, by the call itself,
 * as for a direct call: a refusal then gets the pair's words from {@link pairRefusal}.
 */
export function unwrapCall(
  scope: McpScope,
  params: CallToolRequestParams,
): { params: CallToolRequestParams; scope: McpScope } | { refused: CallToolResult } {
  const read = readCallArguments(params.arguments ?? {});
  if (!read.ok)
    return {
      refused: errorText(
        `${read.message} Call ${CALL_TOOL} as {"name": "<tool>", "arguments": {…}, "sessionId": "<the id agent_change_mode returned, or null>"}.`,
      ),
    };
  const { name, arguments: args, sessionId } = read.value;
  if (name === CALL_TOOL || name === FIND_TOOLS)
    return { refused: errorText(`${name} is called directly, not through ${CALL_TOOL}.`) };
  const innerArgs = (args ?? {}) as Record<string, unknown>;
  const inner: CallToolRequestParams =
    params._meta === undefined ? { name, arguments: innerArgs } : { name, arguments: innerArgs, _meta: params._meta };
  return { params: inner, scope: inScope(scope, sessionId ?? scope.agentSessionId) };
}

/**
 * Why a call through the pair did not run, in words that tell this client what it can do: the session
 * does not exist (or is another principal's), or its mode (the endpoint's, without one) does not offer
 * the tool, and the call that changes that. Read on this refusal path only.
 */
export async function pairRefusal(host: AptixHost, scope: McpScope, name: string): Promise<CallToolResult> {
  const where = await whereTo(host, scope, undefined);
  if ('refused' in where) return errorText(where.refused);
  return errorText(
    await outsideMode(host, name, where.mode, where.sessionId, await host.toolNames({ mode: where.mode })),
  );
}

/** Why a tool cannot run through the pair in this mode, and the call that would make it run. */
async function outsideMode(
  host: AptixHost,
  name: string,
  mode: string,
  sessionId: string | undefined,
  offered: readonly string[],
): Promise<string> {
  const session =
    sessionId === undefined
      ? `the default mode "${mode}" (no sessionId was given)`
      : `mode "${mode}" of agent session ${sessionId}`;
  const modes = await modesOffering(host, name, mode);
  const handle = sessionId === undefined ? '' : `, "sessionId": "${sessionId}"`;
  const lead =
    host.tool(name) === undefined
      ? `There is no tool "${name}".`
      : `Tool "${name}" is not offered in ${session}; it was not run.`;
  const change =
    modes.length === 0
      ? ''
      : sessionId === undefined
        ? ` It is offered in mode ${modes.map((key) => `"${key}"`).join(', ')}: call ` +
          `agent_change_mode with that mode, then call ${name} through ${CALL_TOOL} with the ` +
          `sessionId agent_change_mode returns.`
        : ` It is offered in mode ${modes.map((key) => `"${key}"`).join(', ')}: change the session's ` +
          `mode with ${CALL_TOOL} {"name": "agent_change_mode", "arguments": {"mode": "${modes[0]}", ` +
          `"branch": false, "reason": "…"}${handle}}, then call it again.`;
  return `${lead} Tools in this mode: ${offered.join(', ')} (${FIND_TOOLS} searches them${sessionId === undefined ? '' : ` with {"sessionId": "${sessionId}"}`}).${change}`;
}

/** The modes that offer a tool now, but `except`. */
export async function modesOffering(host: AptixHost, name: string, except?: string): Promise<string[]> {
  const modes: string[] = [];
  for (const { key } of host.modes())
    if (key !== except && (await host.toolNames({ mode: key })).includes(name)) modes.push(key);
  return modes;
}

/** The scope a call through the pair runs in: the caller's own when it names no other agent session. */
function inScope(scope: McpScope, agentSessionId: string | undefined): McpScope {
  if (agentSessionId === scope.agentSessionId) return scope;
  // Another agent session than the MCP session's: its calls run there, and nothing moves the MCP session's binding.
  return {
    era: scope.era,
    agentSessionId,
    ...(scope.listMode === undefined ? {} : { listMode: scope.listMode }),
    ...(scope.cancel === undefined ? {} : { cancel: scope.cancel }),
    ...(scope.logLevel === undefined ? {} : { logLevel: scope.logLevel }),
    ...(scope.log === undefined ? {} : { log: scope.log }),
    ...(scope.actor === undefined ? {} : { actor: scope.actor }),
    ...(scope.clientCapabilities === undefined ? {} : { clientCapabilities: scope.clientCapabilities }),
    ...(scope.questions === undefined ? {} : { questions: scope.questions }),
    discovery: true,
  };
}

/** What a mode change answers besides the tool's result, on a scope that offers the pair: how to reach the new mode's tools. */
export function afterChangeGuidance(scope: McpScope, sessionId: string, mode: string): string {
  const tail =
    `find them with ${FIND_TOOLS} {"sessionId": "${sessionId}", "query": "<what you want to ` +
    `do>"} and call one with ${CALL_TOOL} {"sessionId": "${sessionId}", "name": "<tool>", ` +
    `"arguments": {…}}. To change this session's mode again, call agent_change_mode through ` +
    `${CALL_TOOL} with the same sessionId.`;
  if (scope.era === 'legacy')
    return `Agent session ${sessionId} is now in mode "${mode}". If your tool list does not show this mode's tools, ${tail}`;
  // Over stdio the connection keeps the session the change started: direct calls run in it from now on.
  if (scope.longLived === true)
    return `Agent session ${sessionId} is now in mode "${mode}", and this connection's calls run in it, direct ones too. Its tools that are not in your tool list: ${tail}`;
  return `Agent session ${sessionId} is now in mode "${mode}". Its tools are not in your tool list: ${tail} Tools called directly, without a sessionId, keep working in the default mode.`;
}
