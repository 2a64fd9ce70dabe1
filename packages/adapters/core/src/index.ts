/**
 * @aptix/adapter-core: what the framework adapters share. Tools checked by the registry and built once,
 * run by the executor, scoped by an agent session's mode, with their usage guidance as a prompt
 * fragment. Everything exported here is public API.
 */
export { createAptixTools } from './create-aptix-tools.js';
export {
  AptixTools,
  type AptixSessionScope,
  type AptixToolsOptions,
  type CallOptions,
  type ToolDescription,
} from './aptix-tools.js';
export { AdapterErrorCode, AptixToolError, failureText } from './adapter-errors.js';
export { META_TOOLS, type DeferredModes } from './deferred-tools.js';
export {
  AdapterSetupError,
  PROVIDED_DEPENDENCIES,
  type ConfiguredToolPackage,
  type ToolSource,
} from './tool-sources.js';
