/**
 * @aptix/openai-agents: Aptix tool packages as OpenAI Agents SDK function tools. Everything exported
 * here is public API.
 */
export { createAgentsTools, type AgentsToolsOptions, type AptixAgentsTools } from './agents-tools.js';
export { agentsUnits, type AgentsResources, type AgentsUnits } from './agents-units.js';
export {
  AdapterErrorCode,
  AdapterSetupError,
  AptixToolError,
  AptixUnitError,
  type AptixSessionScope,
  type UnitResult,
  type ToolSource,
} from '@aptix/adapter-core';
