/**
 * @aptix/langchain: Aptix tool packages as LangChain.js tools. Everything exported here is public API.
 */
export {
  AptixStructuredTool,
  createLangChainTools,
  type AptixLangChainTools,
  type ModelRequestWithTools,
} from './langchain-tools.js';
export { AptixPromptTemplate, AptixResourceLoader, promptTemplate } from './langchain-units.js';
export {
  AdapterErrorCode,
  AdapterSetupError,
  AptixToolError,
  AptixUnitError,
  type AptixSessionScope,
  type AptixToolsOptions,
  type ToolSource,
} from '@aptix/adapter-core';
