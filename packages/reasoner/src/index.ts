/**
 * @aptix/reasoner: the agent loop over the OpenAI Responses API. It offers a session's mode's tools to
 * the model with their usage guidance, runs the model's calls through the executor, and feeds the
 * results back until the model answers. Everything exported here is public API.
 */
export {
  createReasoner,
  DEFAULT_MAX_STEPS,
  MODE_CHANGE_TOOL,
  Reasoner,
  type ModelSettings,
  type ReasonerOptions,
  type ReasonerSessionStore,
  type ToolOutputSubmission,
  type TurnOptions,
} from './reasoner.js';
export {
  toMessageResponse,
  type MessageResponseBody,
  type TurnResult,
  type TurnStatus,
  type TurnToolCall,
} from './turn.js';
export { toServerSentEvent, type ReasonerEvent, type ReasonerEventListener, type ReasonerEventType } from './events.js';
export { ReasonerError, ReasonerErrorCode } from './reasoner-error.js';
export {
  createOpenAIClient,
  DEFAULT_OPENAI_BASE_URL,
  resolveModelConnection,
  type ModelConnection,
  type ResolvedModelConnection,
} from './model-config.js';
export {
  buildModePrompts,
  DEFAULT_BOOT_PROMPT,
  TOOL_GUIDANCE_TAG,
  type ModePrompt,
  type ReasonerToolRegistry,
} from './instructions.js';
export {
  PENDING_CALL_ITEM,
  ToolOutputCode,
  toModelInput,
  type ConversationItem,
  type FunctionCall,
  type PendingToolCall,
} from './conversation.js';
export { APPROVAL_ID_KEY, approvalIdOf, type TurnApprovals } from './approvals.js';
export type { DeferredModes } from './deferred-modes.js';
