/**
 * @aptix/openai-agents: Aptix tool packages as OpenAI Agents SDK function tools. Everything exported
 * here is public API.
 */
export { createAgentsTools, type AgentsToolsOptions, type AptixAgentsTools } from './agents-tools.js';
export {
  AdapterErrorCode,
  AdapterSetupError,
  AptixToolError,
  type AptixSessionScope,
  type ToolSource,
} from '@aptix/adapter-core';
