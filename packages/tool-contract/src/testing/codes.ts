import { ContractErrorCode } from '../errors.js';

/**
 * The codes of the contract kit's own findings, beside the registry's {@link ContractErrorCode}s.
 * Codes are API: CI scripts and tests branch on them, so a code is never renamed or reused.
 */
export const ContractCheckCode = {
  /** OpenAI strict mode cannot take the schema, and the tool does not declare `strict: false`. */
  STRICT_MODE_REJECTED: 'STRICT_MODE_REJECTED',
  /** The tool declares `strict: false` although strict mode would take its schema (a warning). */
  STRICT_OPT_OUT_UNNEEDED: 'STRICT_OPT_OUT_UNNEEDED',
  /** `getSchema()` gave a different canonical schema in another Node process. */
  SCHEMA_DIFFERS_ACROSS_PROCESSES: 'SCHEMA_DIFFERS_ACROSS_PROCESSES',
  /** The Node process that reads the schemas on its own could not import the module or read a schema. */
  SCHEMA_PROCESS_FAILED: 'SCHEMA_PROCESS_FAILED',
  /** A section of AGN-005 §7.2.2 is missing from `ToolUsageMetadata` (a warning). */
  USAGE_SECTION_MISSING: 'USAGE_SECTION_MISSING',
  /** `ToolUsageMetadata` does not open with `<tool_name> — Usage Guide` (a warning). */
  USAGE_TITLE_MISSING: 'USAGE_TITLE_MISSING',
  /** An argument of the schema is never mentioned in `ToolUsageMetadata` (AGN-005 §7.2.3, a warning). */
  USAGE_ARGUMENT_UNDOCUMENTED: 'USAGE_ARGUMENT_UNDOCUMENTED',
  /** Building an instance with the kit's dependencies threw. */
  TOOL_NOT_CONSTRUCTIBLE: 'TOOL_NOT_CONSTRUCTIBLE',
  /** Garbage arguments the schema refuses came back as a successful result. */
  GARBAGE_ACCEPTED: 'GARBAGE_ACCEPTED',
  /** `execute` threw or rejected on garbage arguments, or the executor caught an exception from it. */
  GARBAGE_THREW: 'GARBAGE_THREW',
  /** The answer to garbage arguments was not a well-formed InvokeResult. */
  GARBAGE_MALFORMED_RESULT: 'GARBAGE_MALFORMED_RESULT',
  /** No answer to garbage arguments within the kit's time limit. */
  GARBAGE_TIMED_OUT: 'GARBAGE_TIMED_OUT',
  /** A failed result echoed so much text (the garbage, usually) that it would flood the model's context. */
  FAILURE_MESSAGE_TOO_LONG: 'FAILURE_MESSAGE_TOO_LONG',
  /** An exception on arguments the schema accepts (often a stand-in dependency being called; a warning). */
  VALID_ARGUMENTS_THREW: 'VALID_ARGUMENTS_THREW',
  /** A tool that takes the AbortSignal did not settle within the grace period after its call was cancelled. */
  CANCELLATION_NOT_SETTLED: 'CANCELLATION_NOT_SETTLED',
  /** The tool's source returns an error code its usage guide never names (AGN-005 §7.2.1, a warning). */
  USAGE_ERROR_CODE_UNDOCUMENTED: 'USAGE_ERROR_CODE_UNDOCUMENTED',
  /** A built-in prototype gained or lost a property while the tool handled garbage arguments. */
  PROTOTYPE_POLLUTED: 'PROTOTYPE_POLLUTED',
  /** The package's entry could not be found or imported. */
  PACKAGE_IMPORT_FAILED: 'PACKAGE_IMPORT_FAILED',
  /** The package's entry exports no `tools` list, or an empty one. */
  PACKAGE_TOOLS_MISSING: 'PACKAGE_TOOLS_MISSING',
  /** The package's `createDependencies`, or its contract setup module, failed. */
  PACKAGE_SETUP_FAILED: 'PACKAGE_SETUP_FAILED',
  /** The package has no committed schema snapshot. */
  SCHEMA_SNAPSHOT_MISSING: 'SCHEMA_SNAPSHOT_MISSING',
  /** A tool's schema differs from the committed snapshot: an API change that needs a changeset. */
  SCHEMA_SNAPSHOT_MISMATCH: 'SCHEMA_SNAPSHOT_MISMATCH',
  /** The snapshot was updated but no changeset mentions the package (a warning). */
  CHANGESET_MISSING: 'CHANGESET_MISSING',
} as const;
export type ContractCheckCode = (typeof ContractCheckCode)[keyof typeof ContractCheckCode];

/** Any code a contract report can carry. */
export type ContractFindingCode = ContractErrorCode | ContractCheckCode;

/** One finding of the kit: a stable code and the whole message (the tool, the rule and the fix). */
export interface ContractFinding {
  readonly code: ContractFindingCode;
  readonly message: string;
}

/** What part of the contract a finding is about; `describeToolContract` runs one test per check. */
export type ContractCheck =
  | 'rules'
  | 'descriptions'
  | 'strict'
  | 'processes'
  | 'usage'
  | 'garbage'
  | 'cancellation'
  | 'prototypes'
  | 'package'
  | 'snapshot';

/** The check each code belongs to: every code is listed, so a new code cannot be left out of the suites. */
export const CONTRACT_CHECK_OF: { readonly [code in ContractFindingCode]: ContractCheck } = {
  [ContractErrorCode.NOT_A_CLASS]: 'rules',
  [ContractErrorCode.TOOL_NAME_MISSING]: 'rules',
  [ContractErrorCode.TOOL_NAME_NOT_DATA_PROPERTY]: 'rules',
  [ContractErrorCode.TOOL_NAME_INVALID]: 'rules',
  [ContractErrorCode.TOOL_NAME_TOO_LONG]: 'rules',
  [ContractErrorCode.USAGE_METADATA_MISSING]: 'rules',
  [ContractErrorCode.USAGE_METADATA_TOO_LARGE]: 'rules',
  [ContractErrorCode.EXECUTE_MISSING]: 'rules',
  [ContractErrorCode.GET_SCHEMA_MISSING]: 'rules',
  [ContractErrorCode.GET_SCHEMA_HAS_PARAMETERS]: 'rules',
  [ContractErrorCode.GET_SCHEMA_THREW]: 'rules',
  [ContractErrorCode.SCHEMA_SHAPE_INVALID]: 'rules',
  [ContractErrorCode.SCHEMA_NAME_MISMATCH]: 'rules',
  [ContractErrorCode.SCHEMA_PARAMETERS_INVALID]: 'rules',
  [ContractErrorCode.SCHEMA_PROPERTY_TYPE_MISSING]: 'rules',
  [ContractErrorCode.SCHEMA_PROPERTY_DESCRIPTION_MISSING]: 'descriptions',
  [ContractErrorCode.SCHEMA_NOT_DETERMINISTIC]: 'rules',
  [ContractErrorCode.TIMEOUT_INVALID]: 'rules',
  [ContractErrorCode.TASK_SUPPORT_INVALID]: 'rules',
  [ContractErrorCode.RELEASES_SIGNAL_INVALID]: 'rules',
  [ContractErrorCode.DUPLICATE_TOOL]: 'package',
  [ContractErrorCode.APPROVAL_POLICY_INVALID]: 'rules',
  [ContractErrorCode.OUTPUT_SCHEMA_INVALID]: 'rules',
  [ContractErrorCode.NOT_A_PROMPT]: 'rules',
  [ContractErrorCode.NOT_A_RESOURCE]: 'rules',
  [ContractErrorCode.UNIT_NAME_INVALID]: 'rules',
  [ContractErrorCode.UNIT_DESCRIPTION_INVALID]: 'descriptions',
  [ContractErrorCode.PROMPT_ARGUMENTS_INVALID]: 'rules',
  [ContractErrorCode.RESOURCE_URI_INVALID]: 'rules',
  [ContractErrorCode.RESOURCE_MIME_TYPE_INVALID]: 'rules',
  [ContractErrorCode.RESOURCE_ANNOTATIONS_INVALID]: 'rules',
  [ContractErrorCode.UNIT_FUNCTION_INVALID]: 'rules',
  [ContractErrorCode.UNIT_MODES_INVALID]: 'rules',
  [ContractErrorCode.DUPLICATE_PROMPT]: 'package',
  [ContractErrorCode.DUPLICATE_RESOURCE]: 'package',
  [ContractCheckCode.STRICT_MODE_REJECTED]: 'strict',
  [ContractCheckCode.STRICT_OPT_OUT_UNNEEDED]: 'strict',
  [ContractCheckCode.SCHEMA_DIFFERS_ACROSS_PROCESSES]: 'processes',
  [ContractCheckCode.SCHEMA_PROCESS_FAILED]: 'processes',
  [ContractCheckCode.USAGE_SECTION_MISSING]: 'usage',
  [ContractCheckCode.USAGE_TITLE_MISSING]: 'usage',
  [ContractCheckCode.USAGE_ARGUMENT_UNDOCUMENTED]: 'usage',
  [ContractCheckCode.TOOL_NOT_CONSTRUCTIBLE]: 'garbage',
  [ContractCheckCode.GARBAGE_ACCEPTED]: 'garbage',
  [ContractCheckCode.GARBAGE_THREW]: 'garbage',
  [ContractCheckCode.GARBAGE_MALFORMED_RESULT]: 'garbage',
  [ContractCheckCode.GARBAGE_TIMED_OUT]: 'garbage',
  [ContractCheckCode.FAILURE_MESSAGE_TOO_LONG]: 'garbage',
  [ContractCheckCode.VALID_ARGUMENTS_THREW]: 'garbage',
  [ContractCheckCode.CANCELLATION_NOT_SETTLED]: 'cancellation',
  [ContractCheckCode.USAGE_ERROR_CODE_UNDOCUMENTED]: 'usage',
  [ContractCheckCode.PROTOTYPE_POLLUTED]: 'prototypes',
  [ContractCheckCode.PACKAGE_IMPORT_FAILED]: 'package',
  [ContractCheckCode.PACKAGE_TOOLS_MISSING]: 'package',
  [ContractCheckCode.PACKAGE_SETUP_FAILED]: 'package',
  [ContractCheckCode.SCHEMA_SNAPSHOT_MISSING]: 'snapshot',
  [ContractCheckCode.SCHEMA_SNAPSHOT_MISMATCH]: 'snapshot',
  [ContractCheckCode.CHANGESET_MISSING]: 'snapshot',
};
