/**
 * @aptix/ai-sdk: Aptix tool packages as Vercel AI SDK tools. Everything exported here is public API.
 */
export {
  createAiSdkTools,
  type AiSdkToolsOptions,
  type AptixAiSdkTools,
  type AptixStepSettings,
} from './ai-sdk-tools.js';
export { aiSdkUnits, type AiSdkUnits, type ResourcePart } from './ai-sdk-units.js';
export {
  AdapterErrorCode,
  AdapterSetupError,
  AptixToolError,
  type AptixSessionScope,
  type UnitResult,
  type ToolSource,
} from '@aptix/adapter-core';
