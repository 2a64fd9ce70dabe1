/**
 * @aptix/langchain: Aptix tool packages as LangChain.js tools. Everything exported here is public API.
 */
export {
  AptixStructuredTool,
  createLangChainTools,
  type AptixLangChainTools,
  type ModelRequestWithTools,
} from './langchain-tools.js';
export {
  AdapterErrorCode,
  AdapterSetupError,
  AptixToolError,
  type AptixSessionScope,
  type AptixToolsOptions,
  type ToolSource,
} from '@aptix/adapter-core';
