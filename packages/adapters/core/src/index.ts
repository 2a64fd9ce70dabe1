/**
 * @aptix/adapter-core: what the framework adapters share. Tools checked by the registry and built once,
 * run by the executor, scoped by an agent session's mode, with their usage guidance as a prompt
 * fragment. Everything exported here is public API.
 */
export { createAptixTools } from './create-aptix-tools.js';
export { AptixTools } from './aptix-tools.js';
export type { AptixSessionScope, AptixToolsOptions, CallOptions, ToolDescription } from './aptix-tools-options.js';
export {
  AptixUnits,
  type PromptDescription,
  type RenderedPrompt,
  type ResourceDescription,
  type UnitRequestOptions,
  type UnitResult,
} from './aptix-units.js';
export { promptMessageParts, resourceParts, type UnitMessage, type UnitPart } from './unit-content.js';
export { AdapterErrorCode, AptixToolError, AptixUnitError, failureText } from './adapter-errors.js';
export { META_TOOLS, type DeferredModes } from './deferred-tools.js';
export {
  AdapterSetupError,
  PROVIDED_DEPENDENCIES,
  type ConfiguredToolPackage,
  type ToolSource,
} from './tool-sources.js';
