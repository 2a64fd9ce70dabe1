/**
 * @aptix/tool-mode-catalog: the agent mode catalog and the agent_list_modes tool (TUL-010).
 * Everything exported here is public API.
 */
import type { ToolList } from '@aptix/tool-contract';
import { ListModesTool } from './list-modes.tool.js';

export {
  ListModesErrorCode,
  ListModesTool,
  type ListModesResult,
  type ListModesToolDependencies,
  type ModeDescriptor,
} from './list-modes.tool.js';
export {
  AgentModeSummary,
  MODE_ID_PATTERN,
  MODE_KEY_MAX_LENGTH,
  MODE_KEY_PATTERN,
  ModeCatalogFile,
  type AgentModeCatalogService,
} from './mode-summary.js';
export { defaultCatalogPath, loadModeCatalog, loadModeCatalogSync, ModeCatalog } from './mode-catalog.js';
export { ModeCatalogError, ModeCatalogErrorCode, type ModeCatalogIssue } from './mode-catalog-error.js';
export {
  composeModeCatalog,
  ModeCatalogChanges,
  ModeToAdd,
  toolsInNoMode,
  type ComposedModeCatalog,
  type ModeCatalogExtension,
} from './compose.js';
export {
  ALWAYS_OFFERED_TOOL_PACKAGES,
  ALWAYS_OFFERED_TOOLS,
  checkCatalogAgainstRegistry,
  toolNamesForMode,
  toolNotInModeMessage,
  type ModeList,
  type ToolNameLookup,
  type ToolNotInMode,
} from './mode-tools.js';

/** The tools this package contributes to a host. */
export const tools = [ListModesTool] as const satisfies ToolList;
