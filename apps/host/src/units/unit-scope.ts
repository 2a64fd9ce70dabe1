import type { AptixHost } from '../aptix-host.js';
import type { HostUnits, UnitScope } from './host-units.js';

/** The host's prompts and resources, or undefined for a container composed without them (an embedding host's own). */
export function hostUnits(host: AptixHost): HostUnits | undefined {
  return host.container.hasRegistration('unitCatalog') ? host.cradle.unitCatalog : undefined;
}

/**
 * The scope of a prompt or resource request: a mode (the session's, when one is named), and the
 * principal's permissions. A mode the host does not have, or a session the principal cannot see,
 * is a ScopeError from the host, as for tools.
 */
export async function unitScope(
  host: AptixHost,
  where: { readonly mode?: string; readonly sessionId?: string },
  actor: string | undefined,
): Promise<UnitScope> {
  const mode =
    where.sessionId !== undefined
      ? (await host.requireSession(where.sessionId, actor)).mode
      : (where.mode ?? host.cradle.modeCatalog.defaultMode.key);
  const tools = host.permissions.visible(actor, await host.toolNames({ mode }), (name) => name);
  const permissions = host.permissions.of(actor);
  return {
    mode,
    ...(where.sessionId === undefined ? {} : { sessionId: where.sessionId }),
    toolNames: tools,
    mayUse: (unit, toolPackage) => permissions.mayCall(unit, toolPackage),
    mayUseMode: (key) => permissions.mayUseMode(key),
  };
}
