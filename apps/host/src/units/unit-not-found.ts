import { UnitErrorCode } from '@aptix/tool-contract';
import { closest } from '../http/validation-messages.js';
import type { RetiredUnits, UnitKind } from '../live-units.js';
import type { UnitScope } from './host-units.js';

/**
 * The answer to a get or read of a unit a scope does not see: the closest prompt name, and, for a unit
 * its package withdrew while the host runs, why it is gone (to a principal that may see the package's units).
 */
export function notFound(
  kind: UnitKind,
  name: string,
  scope: UnitScope,
  retired: RetiredUnits,
  promptNames: () => string[],
): { ok: false; code: UnitErrorCode; message: string } {
  const shown = JSON.stringify(String(name).slice(0, 200));
  const gone = kind === 'prompt' ? retired.prompt(String(name)) : retired.resourceAt(String(name));
  const withdrawn =
    gone !== undefined && scope.mayUse(gone.resource?.name ?? String(name), gone.owner) ? ` ${gone.message}` : '';
  if (kind === 'prompt') {
    const names = promptNames();
    const guess = closest(String(name), names);
    return {
      ok: false,
      code: UnitErrorCode.PROMPT_NOT_FOUND,
      message: `Unknown prompt: ${shown} in mode "${scope.mode}".${withdrawn}${guess === undefined ? '' : ` Did you mean "${guess}"?`} Prompts: ${names.join(', ') || 'none'}.`,
    };
  }
  return {
    ok: false,
    code: UnitErrorCode.RESOURCE_NOT_FOUND,
    message: `Unknown resource: ${shown} in mode "${scope.mode}".${withdrawn} List them with resources/list and resources/templates/list (GET /v1/resources).`,
  };
}
