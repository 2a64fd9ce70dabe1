import type { Server, ServerContext } from '@modelcontextprotocol/server';
import type { AptixHost } from '../aptix-host.js';
import type { UnitKind } from '../live-units.js';
import { hostUnits } from '../units/unit-scope.js';
import type { McpScope } from './mcp-scope.js';

const LIST_CHANGED = {
  prompt: 'notifications/prompts/list_changed',
  resource: 'notifications/resources/list_changed',
} as const;

/** What a 2025 scope keeps of the unit lists it listed: the host's revision of each kind then. */
function seen(scope: McpScope, kind: UnitKind): number | undefined {
  return kind === 'prompt' ? scope.promptsRevision : scope.resourcesRevision;
}

function see(scope: McpScope, kind: UnitKind, revision: number): void {
  if (kind === 'prompt') scope.promptsRevision = revision;
  else scope.resourcesRevision = revision;
}

/** A 2025 session listed a kind (`prompts/list`, `resources/list`, `resources/templates/list`): it knows that list as it is now. */
export function listedUnits(host: AptixHost, scope: McpScope, kind: UnitKind): void {
  const units = hostUnits(host);
  if (scope.era === 'legacy' && units !== undefined) see(scope, kind, units.revision(kind));
}

/**
 * 2025 sessions over HTTP: a prompt or resource list that changed since the session last listed it
 * (a package's `unitsChanged`, a bridged server's list_changed) is announced on this request's stream,
 * as tool changes are: the host keeps no standalone stream. Over stdio {@link followUnitChanges} tells
 * at once instead.
 */
export async function announceUnitChanges(host: AptixHost, scope: McpScope, ctx: ServerContext): Promise<void> {
  const units = hostUnits(host);
  if (scope.era !== 'legacy' || scope.longLived === true || units === undefined) return;
  for (const kind of ['prompt', 'resource'] as const) {
    const before = seen(scope, kind);
    const now = units.revision(kind);
    if (before === undefined || before === now) continue;
    see(scope, kind, now);
    await ctx.mcpReq.notify({ method: LIST_CHANGED[kind] }).catch(() => undefined);
  }
}

/** A 2025 server that lives as long as its connection (stdio) announces each change the moment it is applied. */
export function followUnitChanges(host: AptixHost, scope: McpScope, server: Server): void {
  const units = hostUnits(host);
  if (scope.era !== 'legacy' || scope.longLived !== true || units === undefined || !units.mayChange) return;
  const stop = units.onChange((kinds) => {
    for (const kind of kinds) server.notification({ method: LIST_CHANGED[kind] }).catch(() => undefined);
  });
  const closed = server.onclose;
  server.onclose = () => {
    stop();
    closed?.();
  };
}

/** What the SDK's `createMcpHandler` publishes to 2026-07-28 clients listening on `subscriptions/listen`. */
export interface ListenNotifier {
  toolsChanged(): void;
  promptsChanged(): void;
  resourcesChanged(): void;
  resourceUpdated(uri: string): void;
}

/**
 * 2026-07-28 clients listening on `subscriptions/listen` hear when the tools, prompts or resources
 * change while the host runs, and of the resources they subscribed to (`resourceSubscriptions`; see
 * unit-subscriptions.ts). Returns what stops following.
 */
export function followForListeners(host: AptixHost, notify: ListenNotifier): () => void {
  const stopTools = host.onToolsChanged(() => notify.toolsChanged());
  const units = hostUnits(host);
  const stopUnits = units?.onChange((kinds) => {
    if (kinds.includes('prompt')) notify.promptsChanged();
    if (kinds.includes('resource')) notify.resourcesChanged();
  });
  const stopUpdates = units?.watches.onUpdated((uri) => notify.resourceUpdated(uri));
  return () => {
    stopTools();
    stopUnits?.();
    stopUpdates?.();
  };
}
