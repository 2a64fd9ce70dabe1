import { CapturingAdminLogger } from '../admin-logger.js';
import type { AnyAgentToolClass } from '../agent-tool.js';
import { inspectToolClass } from '../contract-rules.js';
import { ContractErrorCode } from '../errors.js';
import { canonicalJson, toPlainJson, toStrictMode, type JsonSchema } from '../schema.js';
import { AgentToolExecutor } from '../tool-executor.js';
import { missingUsageSections } from '../usage.js';
import { ContractCheckCode, type ContractFinding, type ContractFindingCode } from './codes.js';
import { checkCancellation, type CancellationRun } from './cancellation-check.js';
import { checkUsageErrorCodes } from './usage-error-codes.js';
import { schemasInFreshProcess, type ProcessSchemaEntry, type ProcessSchemas } from './process-schemas.js';
import { jsonDifferences } from './schema-diff.js';
import { rootPropertyNames, undescribedProperties } from './schema-walk.js';
import { prepareTool, runGarbage } from './garbage-run.js';
import type { GarbageRun, VerifyToolContractOptions } from './verify-options.js';

// The options and a garbage run's shape live in verify-options.ts, so that garbage-run.ts is not imported back.
export type { ContractToolFactory, GarbageRun, VerifyToolContractOptions } from './verify-options.js';

/** How the tool fares with OpenAI strict mode. */
export interface StrictModeReport {
  /** Strict mode can take the schema (`problems` is empty). */
  readonly ok: boolean;
  /** What the tool declares in its schema, if anything. */
  readonly declared: boolean | undefined;
  /** Whether hosts offer the tool with `strict: true`. */
  readonly offered: boolean;
  /** Why strict mode cannot take the schema. */
  readonly problems: readonly string[];
  /** Keywords left out of the strict view; the server still enforces them. */
  readonly relaxed: readonly string[];
}

/** Everything `verifyToolContract` found about one tool class. */
export interface ToolContractReport {
  /** The ToolName, or the class name when there is none. */
  readonly tool: string;
  /** No violations (warnings allowed). */
  readonly ok: boolean;
  /** Every broken rule. */
  readonly violations: readonly ContractFinding[];
  /** What should be fixed but does not fail the contract (usage-metadata sections, for one). */
  readonly warnings: readonly ContractFinding[];
  readonly strict: StrictModeReport;
  /** Canonical JSON of `getSchema()`, when it could be read. */
  readonly canonicalSchema: string | undefined;
  readonly garbage: readonly GarbageRun[];
  /** The cancellation check: skipped (and why), or what the cancelled call was answered. Undefined when garbage was not run. */
  readonly cancellation: CancellationRun | undefined;
  /** Dependencies the kit stood in for. */
  readonly standIns: readonly string[];
  readonly durationMs: number;
}

/** Codes after which the tool cannot be run at all. */
const UNRUNNABLE: ReadonlySet<ContractFindingCode> = new Set([
  ContractErrorCode.NOT_A_CLASS,
  ContractErrorCode.EXECUTE_MISSING,
  ContractErrorCode.GET_SCHEMA_MISSING,
  ContractErrorCode.GET_SCHEMA_HAS_PARAMETERS,
  ContractErrorCode.GET_SCHEMA_THREW,
  ContractErrorCode.SCHEMA_SHAPE_INVALID,
  ContractErrorCode.SCHEMA_PARAMETERS_INVALID,
]);
const USAGE_TITLE = /^\s*(\S+)\s+[—–-]\s+usage guide\s*$/i;

/**
 * Checks a tool class against the whole contract and returns every violation, not only the first:
 * the registry's rules (`inspectToolClass`), a description on every parameter (nested ones too), OpenAI
 * strict mode or a declared `strict: false`, the same canonical schema in two separate Node processes
 * (with `modulePath`), the AGN-005 §7.2.2 usage sections (warnings), and garbage arguments through a
 * real AgentToolExecutor and the tool's own `execute`: each must give a well-formed InvokeResult,
 * failed whenever the schema refuses the input, without a throw or a polluted prototype.
 *
 * @example
 * const report = await verifyToolContract(WeatherTool, { dependencies: { weatherClient: fakeClient } });
 * expect(report.violations).toEqual([]);
 */
export async function verifyToolContract(
  toolClass: unknown,
  options: VerifyToolContractOptions = {},
): Promise<ToolContractReport> {
  const started = performance.now();
  const violations: ContractFinding[] = [];
  const warnings: ContractFinding[] = [];
  const inspected = inspectToolClass(toolClass);
  for (const { code, message } of inspected.violations) violations.push({ code, message });
  const codes = new Set(inspected.violations.map((violation) => violation.code));
  const className = typeof toolClass === 'function' && toolClass.name ? toolClass.name : '(anonymous class)';
  const read = inspected.tool
    ? { schema: undefined, parameters: inspected.tool.parameters }
    : readSchema(toolClass, codes);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  const name = inspected.tool?.name ?? inspected.violations[0]?.tool ?? className;
  const parameters = read?.parameters;
  const canonicalSchema =
    inspected.tool?.canonicalSchema ?? (read?.schema === undefined ? undefined : canonicalJson(read.schema));

  if (parameters !== undefined) checkNestedDescriptions(name, parameters, inspected.violations, violations);
  const strict = strictReport(name, toolClass, parameters, inspected.tool?.strictView, violations, warnings);
  checkUsage(name, toolClass, parameters, warnings);
  await checkOtherProcesses(name, className, canonicalSchema, options, violations);

  let garbage: GarbageRun[] = [];
  let standIns: readonly string[] = [];
  let cancellation: CancellationRun | undefined;
  const runnable =
    parameters !== undefined && typeof toolClass === 'function' && ![...codes].some((code) => UNRUNNABLE.has(code));
  const wanted = options.garbage !== false || options.cancellation !== false;
  const built =
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    runnable && wanted && parameters !== undefined
      ? prepareTool(name, toolClass as AnyAgentToolClass, parameters, inspected.tool !== undefined, options, violations)
      : undefined;
  if (built !== undefined && parameters !== undefined) {
    standIns = built.standIns;
    if (options.garbage !== false) garbage = await runGarbage(name, parameters, built, options, violations, warnings);
    if (options.cancellation !== false) {
      const executor = new AgentToolExecutor({
        registry: built.registry,
        logger: new CapturingAdminLogger(),
        createTool: built.build,
        ...(options.cancelGraceMs === undefined ? {} : { cancelGraceMs: options.cancelGraceMs }),
      });
      cancellation = await checkCancellation(
        name,
        built.instance,
        executor,
        parameters,
        options.cancellationArguments,
        violations,
      );
    }
  }
  if (typeof toolClass === 'function') checkUsageErrorCodes(name, toolClass, warnings, built?.instance);
  return {
    tool: name,
    ok: violations.length === 0,
    violations,
    warnings,
    strict,
    canonicalSchema,
    garbage,
    cancellation,
    standIns,
    durationMs: performance.now() - started,
  };
}

/** Codes after which the schema cannot be read. */
const UNREADABLE: ReadonlySet<ContractFindingCode> = new Set([
  ContractErrorCode.NOT_A_CLASS,
  ContractErrorCode.GET_SCHEMA_MISSING,
  ContractErrorCode.GET_SCHEMA_HAS_PARAMETERS,
  ContractErrorCode.GET_SCHEMA_THREW,
]);

/** The schema of a class that broke a rule, when it can still be read safely. */
function readSchema(
  toolClass: unknown,
  codes: ReadonlySet<ContractFindingCode>,
): { schema: unknown; parameters: JsonSchema | undefined } | undefined {
  if (typeof toolClass !== 'function' || [...codes].some((code) => UNREADABLE.has(code))) return undefined;
  const getSchema = (toolClass as unknown as { getSchema?: unknown }).getSchema;
  if (typeof getSchema !== 'function' || getSchema.length !== 0) return undefined;
  try {
    const schema = toPlainJson(getSchema.call(toolClass)) as { parameters?: unknown; outputSchema?: unknown };
    // As the registry's canonical schema: the declared output schema is part of the tool's API.
    const outputSchema = (toolClass as { OutputSchema?: unknown }).OutputSchema;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (outputSchema !== undefined && schema !== null && typeof schema === 'object')
      schema.outputSchema = toPlainJson(outputSchema);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- kept for callers in plain JavaScript and tool packages, which can pass what the type rules out
    const parameters = schema?.parameters;
    return {
      schema,
      parameters:
        parameters !== null && typeof parameters === 'object' && !Array.isArray(parameters)
          ? (parameters as JsonSchema)
          : undefined,
    };
  } catch {
    return undefined;
  }
}

function checkNestedDescriptions(
  name: string,
  parameters: JsonSchema,
  reported: ReadonlyArray<{ code: string; message: string }>,
  violations: ContractFinding[],
): void {
  const already = reported
    .filter((violation) => violation.code === ContractErrorCode.SCHEMA_PROPERTY_DESCRIPTION_MISSING)
    .map((violation) => violation.message);
  for (const path of undescribedProperties(parameters)) {
    if (already.some((message) => message.includes(`parameter '${path}'`))) continue;
    violations.push({
      code: ContractErrorCode.SCHEMA_PROPERTY_DESCRIPTION_MISSING,
      message:
        `Tool "${name}" breaks the tool contract: parameter '${path}' has no description; the ` +
        `model reads every field's description, nested ones too. Fix: add one, e.g. { description: ` +
        `'What ${path.split(/[.[|]/).pop()} means to the tool.' }.`,
    });
  }
}

function strictReport(
  name: string,
  toolClass: unknown,
  parameters: JsonSchema | undefined,
  view: ReturnType<typeof toStrictMode> | undefined,
  violations: ContractFinding[],
  warnings: ContractFinding[],
): StrictModeReport {
  if (parameters === undefined)
    return { ok: false, declared: undefined, offered: false, problems: ['the schema could not be read'], relaxed: [] };
  let strictView = view;
  try {
    strictView ??= toStrictMode(parameters);
  } catch {
    // A schema too malformed to walk: the rules have reported it already.
    return { ok: false, declared: undefined, offered: false, problems: ['the schema could not be read'], relaxed: [] };
  }
  const { problems, relaxed } = strictView;
  const declaredValue = safeSchemaStrict(toolClass);
  const declared = typeof declaredValue === 'boolean' ? declaredValue : undefined;
  const ok = problems.length === 0;
  if (!ok && declared !== false) {
    const why =
      declared === true
        ? 'it declares strict: true, so OpenAI would refuse the request'
        : 'it does not declare strict: false';
    violations.push({
      code: ContractCheckCode.STRICT_MODE_REJECTED,
      message:
        `Tool "${name}": OpenAI strict mode cannot take its schema (${problems.join('; ')}), and ` +
        `${why}. Fix: change the schema so strict mode can take it, or opt out with ` +
        `functionToolSchema(${name === '' ? 'name' : 'ToolName'}, description, Args, { strict: ` +
        `false }) and say why in the tool's docs.`,
    });
  }
  if (ok && declared === false) {
    warnings.push({
      code: ContractCheckCode.STRICT_OPT_OUT_UNNEEDED,
      message: `Tool "${name}" declares strict: false, but strict mode could take its schema: models follow strict schemas more reliably. Fix: remove { strict: false }.`,
    });
  }
  return { ok, declared, offered: declared ?? ok, problems, relaxed };
}

function safeSchemaStrict(toolClass: unknown): unknown {
  try {
    return (toolClass as { getSchema(): { strict?: unknown } }).getSchema().strict;
  } catch {
    return undefined;
  }
}

function checkUsage(
  name: string,
  toolClass: unknown,
  parameters: JsonSchema | undefined,
  warnings: ContractFinding[],
): void {
  const descriptor =
    typeof toolClass === 'function' ? Object.getOwnPropertyDescriptor(toolClass, 'ToolUsageMetadata') : undefined;
  const text = descriptor && 'value' in descriptor ? descriptor.value : undefined;
  if (typeof text !== 'string' || text.trim() === '') return; // a violation of the rules already
  const title = USAGE_TITLE.exec(text.split('\n').find((line) => line.trim() !== '') ?? '');
  if (title?.[1] !== name) {
    warnings.push({
      code: ContractCheckCode.USAGE_TITLE_MISSING,
      message: `ToolUsageMetadata of ${name} does not open with "${name} — Usage Guide". Fix: make that its first line.`,
    });
  }
  for (const heading of missingUsageSections(text)) {
    warnings.push({
      code: ContractCheckCode.USAGE_SECTION_MISSING,
      message: `ToolUsageMetadata of ${name} has no "${heading}:" section. Fix: add a "${heading}:" line and its points, so the Reasoner shows every tool's guidance the same way.`,
    });
  }
  for (const argument of parameters ? rootPropertyNames(parameters) : []) {
    if (!new RegExp(`\\b${argument.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(text)) {
      warnings.push({
        code: ContractCheckCode.USAGE_ARGUMENT_UNDOCUMENTED,
        message: `ToolUsageMetadata of ${name} never mentions its argument '${argument}' (keep the guide in sync with the schema). Fix: describe it under "Arguments:".`,
      });
    }
  }
}

async function checkOtherProcesses(
  name: string,
  className: string,
  canonicalSchema: string | undefined,
  options: VerifyToolContractOptions,
  violations: ContractFinding[],
): Promise<void> {
  let entries = options.otherProcessSchemas;
  if (entries === undefined && options.modulePath !== undefined) {
    try {
      const processOptions = { exportName: options.exportName, nodeArguments: options.nodeArguments };
      const reads = await Promise.all([
        schemasInFreshProcess(options.modulePath, processOptions),
        schemasInFreshProcess(options.modulePath, processOptions),
      ]);
      entries = reads.map(
        (read) =>
          findEntry(read, name, className) ?? {
            error: `${options.modulePath} exports neither ${className} nor a '${options.exportName ?? 'tools'}' list with a tool named "${name}"`,
          },
      );
    } catch (error) {
      entries = [{ error: error instanceof Error ? error.message : String(error) }];
    }
  }
  if (entries === undefined || canonicalSchema === undefined) return;
  const failures = new Set<string>();
  const differing: string[] = [];
  for (const entry of entries) {
    if (entry.error !== undefined || entry.schema === undefined) failures.add(entry.error ?? 'no schema');
    else if (entry.schema !== canonicalSchema) differing.push(entry.schema);
  }
  for (const failure of failures) {
    violations.push({
      code: ContractCheckCode.SCHEMA_PROCESS_FAILED,
      message:
        `Tool "${name}": reading its schema in a separate Node process failed: ${failure}. Fix: ` +
        `the module must import cleanly on its own, and getSchema() must not depend on anything set ` +
        `up after import.`,
    });
  }
  if (differing.length > 0) {
    const differences = jsonDifferences(JSON.parse(canonicalSchema), JSON.parse(differing[0]!));
    violations.push({
      code: ContractCheckCode.SCHEMA_DIFFERS_ACROSS_PROCESSES,
      message:
        `Tool "${name}": getSchema() gives a different schema in ${differing.length} of ` +
        `${entries.length} separate Node processes (${differences.join('; ')}). Schemas must be ` +
        `built from constants only, not from values fixed when the module loads (a timestamp, a ` +
        `random id, the process id, the environment). Fix: build the schema from constants.`,
    });
  }
}

function findEntry(read: ProcessSchemas, name: string, className: string): ProcessSchemaEntry | undefined {
  return read.exports[className] ?? read.tools.find((entry) => entry.toolName === name);
}
