/**
 * Every stable code Aptix puts on a contract violation or a failed call, kept in one place.
 * Codes are API: callers and models branch on them, so a code is never renamed or reused.
 */
export const ContractErrorCode = {
  NOT_A_CLASS: 'NOT_A_CLASS',
  TOOL_NAME_MISSING: 'TOOL_NAME_MISSING',
  TOOL_NAME_NOT_DATA_PROPERTY: 'TOOL_NAME_NOT_DATA_PROPERTY',
  TOOL_NAME_INVALID: 'TOOL_NAME_INVALID',
  TOOL_NAME_TOO_LONG: 'TOOL_NAME_TOO_LONG',
  USAGE_METADATA_MISSING: 'USAGE_METADATA_MISSING',
  USAGE_METADATA_TOO_LARGE: 'USAGE_METADATA_TOO_LARGE',
  EXECUTE_MISSING: 'EXECUTE_MISSING',
  GET_SCHEMA_MISSING: 'GET_SCHEMA_MISSING',
  GET_SCHEMA_HAS_PARAMETERS: 'GET_SCHEMA_HAS_PARAMETERS',
  GET_SCHEMA_THREW: 'GET_SCHEMA_THREW',
  SCHEMA_SHAPE_INVALID: 'SCHEMA_SHAPE_INVALID',
  SCHEMA_NAME_MISMATCH: 'SCHEMA_NAME_MISMATCH',
  SCHEMA_PARAMETERS_INVALID: 'SCHEMA_PARAMETERS_INVALID',
  SCHEMA_PROPERTY_TYPE_MISSING: 'SCHEMA_PROPERTY_TYPE_MISSING',
  SCHEMA_PROPERTY_DESCRIPTION_MISSING: 'SCHEMA_PROPERTY_DESCRIPTION_MISSING',
  SCHEMA_NOT_DETERMINISTIC: 'SCHEMA_NOT_DETERMINISTIC',
  TIMEOUT_INVALID: 'TIMEOUT_INVALID',
  TASK_SUPPORT_INVALID: 'TASK_SUPPORT_INVALID',
  /** `ReleasesSignal` is declared but is not a boolean. */
  RELEASES_SIGNAL_INVALID: 'RELEASES_SIGNAL_INVALID',
  DUPLICATE_TOOL: 'DUPLICATE_TOOL',
  APPROVAL_POLICY_INVALID: 'APPROVAL_POLICY_INVALID',
  /** `OutputSchema` is not a valid JSON Schema of an object (MCP's `outputSchema` must describe an object). */
  OUTPUT_SCHEMA_INVALID: 'OUTPUT_SCHEMA_INVALID',
  /** A package's `prompts` entry is not a prompt (an object with `render`, as definePrompt makes). */
  NOT_A_PROMPT: 'NOT_A_PROMPT',
  /** A package's `resources` entry is not a resource (an object with `read`, as defineResource makes). */
  NOT_A_RESOURCE: 'NOT_A_RESOURCE',
  /** A prompt's or resource's name breaks the tool name rule. */
  UNIT_NAME_INVALID: 'UNIT_NAME_INVALID',
  /** A prompt without a description, or a title or description that is not a string. */
  UNIT_DESCRIPTION_INVALID: 'UNIT_DESCRIPTION_INVALID',
  /** A prompt's `args` is not an object schema of described string properties (MCP prompt arguments are strings). */
  PROMPT_ARGUMENTS_INVALID: 'PROMPT_ARGUMENTS_INVALID',
  /** A resource's `uri` or `uriTemplate` is missing, both are given, or it is not an absolute URI (a level-1 template). */
  RESOURCE_URI_INVALID: 'RESOURCE_URI_INVALID',
  /** A resource's `mimeType` is not a media type. */
  RESOURCE_MIME_TYPE_INVALID: 'RESOURCE_MIME_TYPE_INVALID',
  /** A resource's `annotations` is not `{ audience?: ('user' | 'assistant')[], priority?: 0 to 1 }`. */
  RESOURCE_ANNOTATIONS_INVALID: 'RESOURCE_ANNOTATIONS_INVALID',
  /** A `render`, `read`, `subscribe` or `complete` that is not a function, or completes a name that is not an argument. */
  UNIT_FUNCTION_INVALID: 'UNIT_FUNCTION_INVALID',
  /** A prompt's or resource's `modes` is not a list of mode keys. */
  UNIT_MODES_INVALID: 'UNIT_MODES_INVALID',
  /** Two prompts with one name. */
  DUPLICATE_PROMPT: 'DUPLICATE_PROMPT',
  /** Two resources with one name, URI or URI template. */
  DUPLICATE_RESOURCE: 'DUPLICATE_RESOURCE',
} as const;
export type ContractErrorCode = (typeof ContractErrorCode)[keyof typeof ContractErrorCode];

/** Codes on failed results produced by the executor itself (a tool adds its own, e.g. `DIVIDE_BY_ZERO`). */
export const ExecutionErrorCode = {
  TOOL_NOT_FOUND: 'TOOL_NOT_FOUND',
  INVALID_ARGUMENTS: 'INVALID_ARGUMENTS',
  /** The call ran past its time-out and the tool stopped before it had any effect. */
  TIMEOUT: 'TIMEOUT',
  /**
   * The call was cancelled or timed out, and the tool did not confirm in time that it stopped: its effect
   * may have happened, or may still happen. Check the state before calling again. Tools use it too, when
   * they cannot know (a connection lost during a commit).
   */
  OUTCOME_UNKNOWN: 'OUTCOME_UNKNOWN',
  TOOL_EXCEPTION: 'TOOL_EXCEPTION',
  TOOL_UNAVAILABLE: 'TOOL_UNAVAILABLE',
  /** The tool's result is not a well-formed InvokeResult: text that is not JSON, or a content block that breaks a rule. */
  MALFORMED_RESULT: 'MALFORMED_RESULT',
  /** The result does not match the tool's declared `OutputSchema`; nothing of it is sent. */
  OUTPUT_SCHEMA_MISMATCH: 'OUTPUT_SCHEMA_MISMATCH',
  /** A person declined the call (approval gates); nothing ran. */
  APPROVAL_DENIED: 'APPROVAL_DENIED',
  /** Nobody decided before the approval expired; nothing ran. */
  APPROVAL_EXPIRED: 'APPROVAL_EXPIRED',
  /** The tool needs an answer from the user first (`InvokeResult.inputRequired`); a caller that cannot ask gets this failure. */
  INPUT_REQUIRED: 'INPUT_REQUIRED',
  /**
   * The tool needs a completion from the client's model (MCP sampling), and this caller cannot give one:
   * an HTTP invoke, a call without an MCP client, or an MCP client that did not declare `sampling`.
   * Nothing was done. Call the tool from an MCP client that declares the sampling capability.
   */
  SAMPLING_UNAVAILABLE: 'SAMPLING_UNAVAILABLE',
  /**
   * The tool needs the client's roots (MCP `roots/list`), and this caller cannot list them: an HTTP
   * invoke, or an MCP client that did not declare `roots`. Nothing was done. Call the tool from an MCP
   * client that declares the roots capability.
   */
  ROOTS_UNAVAILABLE: 'ROOTS_UNAVAILABLE',
  /** The result is larger than the executor's bound (`maxResultBytes`); nothing of it is sent. */
  RESULT_TOO_LARGE: 'RESULT_TOO_LARGE',
  /** The tool's isolated worker ran out of memory, or hit another of its resource limits, and was replaced. */
  RESOURCE_LIMIT: 'RESOURCE_LIMIT',
  /**
   * The tool tried to end the host process (`process.exit`, `process.abort`, `process.reallyExit`, or
   * `process.kill` of the host's own process) and the host refused it: nothing ended, the call failed.
   */
  PROCESS_EXIT_REFUSED: 'PROCESS_EXIT_REFUSED',
} as const;
export type ExecutionErrorCode = (typeof ExecutionErrorCode)[keyof typeof ExecutionErrorCode];

/** One broken rule of the tool contract, with the tool it concerns and how to fix it. */
export interface ContractViolation {
  readonly code: ContractErrorCode;
  /** The tool's name when it could be read, otherwise the class name. */
  readonly tool: string;
  /** The whole message: the tool, the rule broken and how to fix it. */
  readonly message: string;
}

/**
 * Thrown by `AgentToolRegistry.registerTool` (and a host's start-up) when a tool breaks the contract.
 * Registration is the one place Aptix throws: a malformed tool is a programmer error that must stop start-up.
 */
export class ToolContractError extends Error {
  override readonly name = 'ToolContractError';
  readonly code: ContractErrorCode;
  readonly tool: string;
  /** Every violation found; `code` and `message` are those of the first. */
  readonly violations: readonly ContractViolation[];

  constructor(violations: readonly [ContractViolation, ...ContractViolation[]], options?: { cause?: unknown }) {
    const [first] = violations;
    const more =
      violations.length > 1
        ? `\n${violations
            .slice(1)
            .map((v) => `  also: ${v.message}`)
            .join('\n')}`
        : '';
    super(first.message + more, options);
    this.code = first.code;
    this.tool = first.tool;
    this.violations = violations;
  }
}
