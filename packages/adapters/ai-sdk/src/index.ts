/**
 * @aptix/ai-sdk: Aptix tool packages as Vercel AI SDK tools. Everything exported here is public API.
 */
export {
  createAiSdkTools,
  type AiSdkToolsOptions,
  type AptixAiSdkTools,
  type AptixStepSettings,
} from './ai-sdk-tools.js';
export {
  AdapterErrorCode,
  AdapterSetupError,
  AptixToolError,
  type AptixSessionScope,
  type ToolSource,
} from '@aptix/adapter-core';
