/**
 * @aptix/tool-contract: the contract every Aptix tool satisfies, and the registry and executor that
 * enforce it. Everything exported here is public API; the contract kit lives at `./testing`.
 */
export { InvokeResult, type InvokeError, type InvokeFailure, type InvokeSuccess } from './invoke-result.js';
export {
  checkContent,
  Content,
  isMediaType,
  CONTENT_BLOCK_TYPES,
  describeContent,
  isBase64,
  MAX_CONTENT_BLOCKS,
  type AudioContent,
  type ContentBlock,
  type ContentCheck,
  type EmbeddedResourceContent,
  type ImageContent,
  type TextContent,
} from './content.js';
export { modelContentParts, type ModelContentPart } from './model-content.js';
export type {
  AgentTool,
  AgentToolClass,
  AgentToolExecutionContext,
  AnyAgentToolClass,
  ToolAnnotations,
  ToolDependencies,
  ToolList,
  ToolLogLevel,
  TaskInput,
  TaskSupport,
  PackageUnits,
  ToolPackage,
  ToolPackageHost,
  ToolProgress,
} from './agent-tool.js';
export {
  CapturingAdminLogger,
  createAdminLogger,
  silentAdminLogger,
  type AdminLogger,
  type CapturedLogEntry,
  type LevelLogger,
  type LogLevel,
  type LogPairs,
} from './admin-logger.js';
export { ContractErrorCode, ExecutionErrorCode, ToolContractError, type ContractViolation } from './errors.js';
export { refusedResult, ToolRefusal } from './refusal.js';
export {
  acceptsNull,
  canonicalJson,
  functionToolSchema,
  toPlainJson,
  toStrictMode,
  type ChatFunctionDefinition,
  type DefinitionByFormat,
  type DefinitionFormat,
  type FunctionToolSchema,
  type JsonSchema,
  type McpToolDefinition,
  type ObjectSchemaLike,
  type ParametersSchema,
  type ResponsesFunctionDefinition,
  type StrictModeView,
} from './schema.js';
export { missingUsageSections, usage, USAGE_SECTIONS } from './usage.js';
export { usageGuide, type UsageEntries, type UsageGuideSections, type UsageItems } from './usage-guide.js';
export { TOOL_GUIDANCE_TAG, toolGuidanceSection, type ToolGuide } from './tool-guidance.js';
export {
  decodeArguments,
  parseArgumentsJson,
  validateArguments,
  type ArgumentIssue,
  type DecodedArguments,
} from './arguments.js';
export {
  inspectToolClass,
  suggestSnakeCase,
  TOOL_NAME_MAX_LENGTH,
  TOOL_NAME_PATTERN,
  USAGE_METADATA_MAX_LENGTH,
  type InspectedTool,
} from './contract-rules.js';
export { describeThrown } from './describe-thrown.js';
export { MCP_HEADER_KEYWORD, mcpHeaderProblem } from './mcp-header.js';
export {
  acceptedAnswer,
  inputNeededProblem,
  MAX_INPUT_STATE_BYTES,
  unanswerableKinds,
  type ElicitationInputRequest,
  type ToolInputChannel,
  type ToolInputKind,
  type ToolInputNeeded,
  type ToolInputRequest,
} from './input-required.js';
export {
  listedRoots,
  MAX_CLIENT_ROOTS,
  MAX_SAMPLING_MESSAGES,
  rootsRequest,
  sampledText,
  samplingRequest,
  type ClientRoot,
  type RootsInputRequest,
  type SamplingInputRequest,
  type SamplingMessage,
} from './sampling-and-roots.js';
export { TypedAgentTool, type RunOutput } from './typed-agent-tool.js';
export {
  defineTool,
  type DefinedTool,
  type ToolDefinition,
  type ToolDefinitionFields,
  type ToolResultOf,
  type ToolRun,
  type ToolRunner,
  type ToolRunOutput,
  type ToolUsageFields,
} from './define-tool.js';
export {
  AgentToolRegistry,
  type AgentToolRegistryOptions,
  type RegisteredTool,
  type ToolListing,
} from './tool-registry.js';
export {
  APPROVAL_META_KEY,
  approvalPolicyKind,
  evaluateApprovalPolicy,
  type ApprovalDecision,
  type ApprovalPolicy,
  type ApprovalPolicyKind,
} from './approval.js';
export {
  AgentToolExecutor,
  DEFAULT_CANCEL_GRACE_MS,
  DEFAULT_MAX_ERROR_MESSAGE_LENGTH,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_TOOL_TIMEOUT_MS,
  type AgentToolExecutorOptions,
  type ExecuteOptions,
  type ToolFactory,
} from './tool-executor.js';
export {
  cleanProgress,
  progressGate,
  PROGRESS_MESSAGE_MAX_LENGTH,
  type ProgressGate,
  type ProgressGateOptions,
} from './progress-gate.js';
export { logGate, TOOL_LOG_LEVELS, type CallerLogEntry, type LogGate, type LogGateOptions } from './log-gate.js';
export { cancelledJson, isAbortError, reportsCancellation, type CancelledPayload } from './cancellation.js';
export {
  definePrompt,
  type CompleteFunction,
  type CompletionContext,
  type DefinedPrompt,
  type PromptDefinition,
  type PromptList,
  type PromptMessage,
  type PromptRenderOutput,
  type UnitContext,
} from './prompt.js';
export {
  defineResource,
  type BlobResourceContents,
  type DefinedResource,
  type ResourceAnnotations,
  type ResourceContents,
  type ResourceDefinition,
  type ResourceList,
  type ResourceReadOutput,
  type ResourceRequest,
  type TextResourceContents,
} from './resource.js';
export { MAX_RESOURCE_URI_LENGTH, parseUriTemplate, uriProblem, type UriTemplate } from './uri-template.js';
export {
  inspectPrompt,
  inspectResource,
  type InspectedPrompt,
  type InspectedResource,
  type PromptArgumentListing,
} from './unit-rules.js';
export {
  PromptRegistry,
  ResourceRegistry,
  type RegisteredPrompt,
  type RegisteredResource,
  type UnitRegistryOptions,
} from './unit-registry.js';
export {
  completeUnit,
  DEFAULT_UNIT_TIMEOUT_MS,
  MAX_COMPLETION_VALUES,
  readResource,
  renderPrompt,
  UnitErrorCode,
  type UnitCallOptions,
  type UnitOutcome,
} from './unit-calls.js';
export {
  errorType,
  failSpan,
  inSpan,
  meterInstruments,
  scopeTracer,
  tracingEnabled,
  truncatedForSpan,
} from './telemetry.js';
export { DURATION_BUCKETS_S } from './tool-call-telemetry.js';
