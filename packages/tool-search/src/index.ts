/**
 * @aptix/tool-search: deferred tool loading. A full-text index over a mode's tools, and the
 * `aptix_find_tools` / `aptix_call_tool` pair through which a model finds and calls tools it was not
 * given up front: for modes too large to list, and for MCP clients whose tool list cannot follow a
 * mode change. Everything exported here is public API.
 */
export { ToolSearchIndex, type SearchableTool } from './tool-search-index.js';
export {
  deferredToolNotInModeMessage,
  findingToolsSection,
  metaToolNotOfferedMessage,
  sessionMismatchMessage,
} from './deferred-messages.js';
export { ToolFinder, type FindableTool, type FindToolsResult, type FoundTool } from './tool-finder.js';
export {
  CALL_TOOL,
  CallToolArgs,
  DEFAULT_FIND_LIMIT,
  FIND_TOOLS,
  FindToolsArgs,
  isMetaTool,
  MAX_FIND_LIMIT,
  metaToolDefinitions,
  readCallArguments,
  readFindArguments,
  type CallToolArguments,
  type FindToolsArguments,
  type ReadArguments,
} from './meta-tools.js';
