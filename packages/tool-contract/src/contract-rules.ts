import { mcpHeaderProblem } from './mcp-header.js';
import type { ToolAnnotations } from './agent-tool.js';
import { approvalPolicyKind, type ApprovalPolicy, type ApprovalPolicyKind } from './approval.js';
import { ajvFor, contractAjv } from './ajv.js';
import { findStrictSchemaProblems, formatSchemaErrors } from './schema-strictness.js';
import { describeThrown } from './describe-thrown.js';
import { ContractErrorCode, type ContractViolation } from './errors.js';
import { checkOutputSchema } from './output-schema.js';
import {
  canonicalJson,
  toPlainJson,
  toStrictMode,
  type FunctionToolSchema,
  type JsonSchema,
  type StrictModeView,
} from './schema.js';

/** `lowercase_snake_case`: the intersection of TUL-011, AGN-005 §2.2 and OpenAI's rules (see the spec README). */
export const TOOL_NAME_PATTERN = /^[a-z0-9]+(_[a-z0-9]+)*$/;
export const TOOL_NAME_MAX_LENGTH = 64;
const SIMPLE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
const MAX_TIMEOUT_MS = 2_147_483_647;
/**
 * The longest `ToolUsageMetadata`, in characters. The Reasoner puts every offered tool's guide in the
 * system prompt, so a guide past this (a generated manual, a file read by mistake) would crowd out the
 * conversation; the first-party guides are a few kilobytes.
 */
export const USAGE_METADATA_MAX_LENGTH = 65_536;

/** What the registry keeps about a tool class that passed every rule. */
export interface InspectedTool {
  readonly name: string;
  readonly description: string;
  /** The parameters exactly as the tool declares them (plain JSON): what the server validates. */
  readonly parameters: JsonSchema;
  readonly usageMetadata: string;
  /** Canonical JSON of `getSchema()`, with the declared `OutputSchema` as `outputSchema`: sorted keys, for snapshots and comparisons. */
  readonly canonicalSchema: string;
  /** Whether the OpenAI definitions carry `strict: true`. */
  readonly strict: boolean;
  /** True when the tool itself set `strict` in its schema. */
  readonly strictDeclared: boolean;
  readonly strictView: StrictModeView;
  readonly timeoutMs: number | undefined;
  /** Whether a call may run as an MCP task. */
  readonly taskSupport: 'forbidden' | 'optional' | 'required';
  /** When a task's questions are asked: on tools/call before the task exists, or by parking the task. */
  readonly taskInput: 'before' | 'during';
  /** The tool declared `ReleasesSignal = true`: its execute may get a reused, never-aborted signal. */
  readonly releasesSignal: boolean;
  readonly annotations: ToolAnnotations | undefined;
  /** Whether calls wait for a person: how listings report the policy. */
  readonly approval: ApprovalPolicyKind;
  /** The declared policy, evaluated per call by the host. */
  readonly approvalPolicy: ApprovalPolicy | undefined;
  /** The declared `OutputSchema` as plain JSON: results are checked against it, MCP lists it. */
  readonly outputSchema: JsonSchema | undefined;
}

const FUNCTION_TOOL_SHAPE = {
  type: 'object',
  required: ['type', 'name', 'description', 'parameters'],
  additionalProperties: false,
  properties: {
    type: { const: 'function' },
    name: { type: 'string', minLength: 1 },
    description: { type: 'string', minLength: 1 },
    strict: { type: 'boolean' },
    parameters: {
      type: 'object',
      required: ['type', 'properties', 'required'],
      properties: {
        type: { const: 'object' },
        properties: { type: 'object' },
        required: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      },
    },
  },
} as const;

let shapeValidator: ReturnType<ReturnType<typeof contractAjv>['compile']> | undefined;

/**
 * Checks a tool class against every rule of TUL-011 §2 and AGN-005 §2.2 and §7, at run time, so
 * plain-JavaScript and dynamically loaded packages are held to the same contract as TypeScript ones.
 * Returns every violation found (rules that depend on an earlier one are skipped once it fails).
 */
export function inspectToolClass(candidate: unknown): { tool?: InspectedTool; violations: ContractViolation[] } {
  const violations: ContractViolation[] = [];
  if (typeof candidate !== 'function' || typeof candidate.prototype !== 'object') {
    const what =
      candidate === null
        ? 'null'
        : typeof candidate === 'object'
          ? 'an object (an instance or a module?)'
          : typeof candidate;
    violations.push({
      code: ContractErrorCode.NOT_A_CLASS,
      tool: '(unknown)',
      message: `A tool must be registered as its class, got ${what}. Fix: pass the class itself, e.g. registerTool(HelloWorldTool), not an instance or a module namespace.`,
    });
    return { violations };
  }
  const cls = candidate as unknown as Record<string, unknown> & { name: string; prototype: Record<string, unknown> };
  const className = cls.name || '(anonymous class)';
  const ownName = Object.getOwnPropertyDescriptor(cls, 'ToolName');
  const toolName = ownName && 'value' in ownName && typeof ownName.value === 'string' ? ownName.value : undefined;
  const who = toolName ? `Tool "${toolName}" (${className})` : `Tool class ${className}`;
  const fail = (code: ContractErrorCode, rule: string, fix: string) => {
    violations.push({
      code,
      tool: toolName ?? className,
      message: `${who} breaks the tool contract: ${rule}. Fix: ${fix}.`,
    });
  };

  // ToolName: an own, static, non-empty string data property in lowercase_snake_case, at most 64 characters.
  if (ownName === undefined) {
    if ('ToolName' in cls)
      fail(
        ContractErrorCode.TOOL_NAME_NOT_DATA_PROPERTY,
        `ToolName is inherited ("${String(cls.ToolName)}"), not declared by the class itself`,
        `declare it on this class: static readonly ToolName = 'your_tool_name'`,
      );
    else
      fail(
        ContractErrorCode.TOOL_NAME_MISSING,
        'it declares no static ToolName',
        `add static readonly ToolName = 'your_tool_name'`,
      );
  } else if (!('value' in ownName)) {
    fail(
      ContractErrorCode.TOOL_NAME_NOT_DATA_PROPERTY,
      'ToolName is an accessor (a getter), not a data property',
      `declare it as a value: static readonly ToolName = 'your_tool_name'`,
    );
  } else if (typeof ownName.value !== 'string' || ownName.value.trim() === '') {
    fail(
      ContractErrorCode.TOOL_NAME_MISSING,
      `ToolName must be a non-empty string, got ${(JSON.stringify(ownName.value) as string | undefined) ?? String(ownName.value)}`,
      `set static readonly ToolName = 'your_tool_name'`,
    );
  } else if (!TOOL_NAME_PATTERN.test(ownName.value)) {
    fail(
      ContractErrorCode.TOOL_NAME_INVALID,
      `ToolName "${ownName.value}" is not lowercase_snake_case (${TOOL_NAME_PATTERN.source})`,
      `rename it, for example to "${suggestSnakeCase(ownName.value)}"`,
    );
  } else if (ownName.value.length > TOOL_NAME_MAX_LENGTH) {
    fail(
      ContractErrorCode.TOOL_NAME_TOO_LONG,
      `ToolName is ${ownName.value.length} characters long; OpenAI allows at most ${TOOL_NAME_MAX_LENGTH}`,
      `shorten it to ${TOOL_NAME_MAX_LENGTH} characters or fewer`,
    );
  }

  // ToolUsageMetadata: an own non-empty string (AGN-005 §7.2).
  const usageDescriptor = Object.getOwnPropertyDescriptor(cls, 'ToolUsageMetadata');
  const usageMetadata = usageDescriptor && 'value' in usageDescriptor ? usageDescriptor.value : undefined;
  if (typeof usageMetadata !== 'string' || usageMetadata.trim() === '') {
    fail(
      ContractErrorCode.USAGE_METADATA_MISSING,
      'ToolUsageMetadata is missing or empty; the agent loop puts it in the system prompt so the model knows when and how to call the tool',
      'add static readonly ToolUsageMetadata = usage`...` with the purpose, rules, arguments, error codes, good and bad usage',
    );
  } else if (usageMetadata.length > USAGE_METADATA_MAX_LENGTH) {
    fail(
      ContractErrorCode.USAGE_METADATA_TOO_LARGE,
      `ToolUsageMetadata is ${usageMetadata.length} characters long; at most ${USAGE_METADATA_MAX_LENGTH} are allowed, because the agent loop puts it in every system prompt`,
      'keep the guide to the purpose, rules, arguments, error codes and a few examples, and move reference material elsewhere',
    );
  }

  // execute on the instance side.
  if (typeof cls.prototype.execute !== 'function') {
    fail(
      ContractErrorCode.EXECUTE_MISSING,
      'instances have no execute(argumentsJson, context, signal) method',
      'implement execute, or extend TypedAgentTool and implement run',
    );
  }

  // TimeoutMs, if declared: a positive integer of milliseconds.
  const timeoutMs = cls.TimeoutMs;
  if (
    timeoutMs !== undefined &&
    !(Number.isInteger(timeoutMs) && (timeoutMs as number) > 0 && (timeoutMs as number) <= MAX_TIMEOUT_MS)
  ) {
    fail(
      ContractErrorCode.TIMEOUT_INVALID,
      `TimeoutMs must be a positive whole number of milliseconds, got ${String(timeoutMs)}`,
      'set static readonly TimeoutMs = 30_000, or remove it to use the default',
    );
  }

  // TaskSupport, if declared: 'optional' or 'required'.
  const taskSupport = (cls as { TaskSupport?: unknown }).TaskSupport;
  if (taskSupport !== undefined && taskSupport !== 'optional' && taskSupport !== 'required') {
    fail(
      ContractErrorCode.TASK_SUPPORT_INVALID,
      `TaskSupport must be 'optional' or 'required', got ${(JSON.stringify(taskSupport) as string | undefined) ?? String(taskSupport)}`,
      "set static readonly TaskSupport = 'optional', or remove it so calls never run as tasks",
    );
  }
  // TaskInput, if declared: 'before' or 'during', and only beside TaskSupport.
  const taskInput = (cls as { TaskInput?: unknown }).TaskInput;
  if (taskInput !== undefined && taskInput !== 'before' && taskInput !== 'during') {
    fail(
      ContractErrorCode.TASK_SUPPORT_INVALID,
      `TaskInput must be 'before' or 'during', got ${(JSON.stringify(taskInput) as string | undefined) ?? String(taskInput)}`,
      "set static readonly TaskInput = 'before' to ask on tools/call before the task exists, or remove it",
    );
  } else if (taskInput !== undefined && taskSupport === undefined) {
    fail(
      ContractErrorCode.TASK_SUPPORT_INVALID,
      'TaskInput is declared but TaskSupport is not, so calls never run as tasks',
      "declare static readonly TaskSupport = 'optional' (or 'required'), or remove TaskInput",
    );
  }

  // ReleasesSignal, if declared: a boolean, read once here so the executor never reads the class per call.
  const releasesSignal = (cls as { ReleasesSignal?: unknown }).ReleasesSignal;
  if (releasesSignal !== undefined && typeof releasesSignal !== 'boolean') {
    fail(
      ContractErrorCode.RELEASES_SIGNAL_INVALID,
      `ReleasesSignal must be true or false, got ${(JSON.stringify(releasesSignal) as string | undefined) ?? String(releasesSignal)}`,
      'set static readonly ReleasesSignal = true only if execute keeps no reference to its signal once it settles, or remove it',
    );
  }

  // ApprovalPolicy, if declared: 'always', 'never', or a function of (args, context).
  const approvalPolicy = cls.ApprovalPolicy;
  const approval = approvalPolicyKind(approvalPolicy);
  if (approval === undefined) {
    fail(
      ContractErrorCode.APPROVAL_POLICY_INVALID,
      `ApprovalPolicy must be 'always', 'never' or a function (args, context) => boolean | { ` +
        `required, reason }, got ` +
        `${(JSON.stringify(approvalPolicy) as string | undefined) ?? String(approvalPolicy)}`,
      "set static readonly ApprovalPolicy = 'always', or a function of the validated arguments",
    );
  } else if (approval === 'dynamic' && (approvalPolicy as (...args: unknown[]) => unknown).length > 2) {
    fail(
      ContractErrorCode.APPROVAL_POLICY_INVALID,
      `ApprovalPolicy takes ${(approvalPolicy as (...args: unknown[]) => unknown).length} parameters; it gets (args, context)`,
      'declare it as (args, context) => …',
    );
  }

  // getSchema: a static function without parameters, returning the function-tool shape.
  const getSchema = cls.getSchema;
  if (typeof getSchema !== 'function') {
    fail(
      ContractErrorCode.GET_SCHEMA_MISSING,
      'it has no static getSchema() function',
      'add static getSchema() { return functionToolSchema(YourTool.ToolName, description, Args); }',
    );
    return { violations };
  }
  if (getSchema.length !== 0) {
    fail(
      ContractErrorCode.GET_SCHEMA_HAS_PARAMETERS,
      `getSchema takes ${getSchema.length} parameter(s); it must take none`,
      'remove the parameters: the schema must depend on nothing but the class',
    );
    return { violations };
  }
  let first: unknown;
  let second: unknown;
  try {
    first = getSchema.call(cls);
    second = getSchema.call(cls);
  } catch (error) {
    fail(
      ContractErrorCode.GET_SCHEMA_THREW,
      `getSchema() threw ${describeThrown(error)}`,
      'make getSchema() return the schema without side effects',
    );
    return { violations };
  }
  // An empty description is the one shape problem functionToolSchema cannot fix: say to write one.
  const description = (first as { description?: unknown } | null)?.description;
  if (typeof description === 'string' && description.trim() === '') {
    fail(
      ContractErrorCode.SCHEMA_SHAPE_INVALID,
      'getSchema() gives the tool no description, and models choose a tool by its description',
      "write one sentence saying what the tool does, as functionToolSchema's second argument: functionToolSchema(ToolName, 'Converts a temperature between units.', Args)",
    );
    return { violations };
  }
  shapeValidator ??= contractAjv().compile(FUNCTION_TOOL_SHAPE);
  if (!shapeValidator(first)) {
    const detail = formatSchemaErrors(shapeValidator.errors ?? [], 'schema');
    fail(
      ContractErrorCode.SCHEMA_SHAPE_INVALID,
      `getSchema() does not return an OpenAI function-tool schema { type: 'function', name, description, parameters: { type: 'object', properties, required } }: ${detail}`,
      'build it with functionToolSchema(ToolName, description, Args)',
    );
    return { violations };
  }
  // The registry's own plain-JSON copy (TypeBox's symbol keys dropped), safe from later changes by the tool.
  const firstJson = JSON.stringify(first);
  const schema = JSON.parse(firstJson) as FunctionToolSchema;
  if (toolName !== undefined && schema.name !== toolName) {
    fail(
      ContractErrorCode.SCHEMA_NAME_MISMATCH,
      `getSchema() names the tool "${schema.name}" but ToolName is "${toolName}"`,
      'use ToolName as the schema name: functionToolSchema(YourTool.ToolName, ...)',
    );
  }
  // The same JSON text is the same schema; only texts that differ are compared key order aside.
  if (
    !sameJson(first, second) &&
    JSON.stringify(second) !== firstJson &&
    canonicalJson(toPlainJson(second)) !== canonicalJson(schema)
  ) {
    fail(
      ContractErrorCode.SCHEMA_NOT_DETERMINISTIC,
      'two calls of getSchema() gave different schemas; schemas must not contain timestamps, ids or random values',
      'build the schema from constants only',
    );
  }
  checkParameters(schema.parameters, fail);
  const outputSchema = checkOutputSchema(cls.OutputSchema, fail);
  if (violations.length > 0) return { violations };

  const strictDeclared = typeof schema.strict === 'boolean';
  const annotations = cls.ToolAnnotations as ToolAnnotations | undefined;
  // Derived views, made when first read: sorting every key of every schema and deriving the strict-mode
  // view are a fifth of the cost of registering a tool, and no contract rule depends on them.
  let canonical: string | undefined;
  let strictView: StrictModeView | undefined;
  const tool: InspectedTool = {
    name: toolName!,
    description: schema.description,
    parameters: schema.parameters,
    usageMetadata: usageMetadata as string,
    get canonicalSchema() {
      // A declared output schema is API too: snapshots and the cross-process check cover it.
      return (canonical ??= canonicalJson(outputSchema === undefined ? schema : { ...schema, outputSchema }));
    },
    get strict() {
      return strictDeclared ? schema.strict! : this.strictView.problems.length === 0;
    },
    strictDeclared,
    get strictView() {
      return (strictView ??= toStrictMode(schema.parameters));
    },
    timeoutMs: timeoutMs as number | undefined,
    taskSupport: taskSupport === 'optional' || taskSupport === 'required' ? taskSupport : 'forbidden',
    taskInput: taskInput === 'before' ? 'before' : 'during',
    releasesSignal: releasesSignal === true,
    annotations: annotations && typeof annotations === 'object' ? { ...annotations } : undefined,
    approval: approval!,
    approvalPolicy: approvalPolicy as ApprovalPolicy | undefined,
    outputSchema,
  };
  return { violations, tool };
}

/**
 * True when `a` and `b` are the same plain JSON data, keys in the same order: then JSON.stringify gives
 * both the same text, without writing either. Anything JSON.stringify would treat specially (toJSON,
 * undefined, functions, symbols, non-plain objects) answers false, and the caller compares the texts.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === null || typeof a !== 'object') {
    return (
      a === b &&
      (a === null || typeof a === 'string' || typeof a === 'boolean' || (typeof a === 'number' && Number.isFinite(a)))
    );
  }
  // One object twice proves nothing about a toJSON or a getter: left to the texts.
  if (a === b || b === null || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (
    Array.isArray(b) ||
    Object.getPrototypeOf(a) !== Object.prototype ||
    Object.getPrototypeOf(b) !== Object.prototype
  )
    return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  for (let i = 0; i < keysA.length; i++) {
    const key = keysA[i]!;
    if (key !== keysB[i] || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
      return false;
  }
  return true;
}

function checkParameters(
  parameters: JsonSchema,
  fail: (code: ContractErrorCode, rule: string, fix: string) => void,
): void {
  const ajv = ajvFor(parameters);
  if (!ajv.validateSchema(parameters)) {
    fail(
      ContractErrorCode.SCHEMA_PARAMETERS_INVALID,
      `parameters is not a valid JSON Schema: ${formatSchemaErrors(ajv.errors ?? [], 'parameters')}`,
      'declare the parameters with TypeBox, e.g. Type.Object({ ... })',
    );
    return;
  }
  const strictProblems = findStrictSchemaProblems(parameters, 'parameters');
  if (strictProblems.length > 0) {
    fail(
      ContractErrorCode.SCHEMA_PARAMETERS_INVALID,
      `parameters breaks ajv's strict rules: ${strictProblems.join('; ')}`,
      'remove unknown keywords and list in required only declared properties',
    );
  }
  const headerProblem = mcpHeaderProblem(parameters);
  if (headerProblem !== undefined)
    fail(
      ContractErrorCode.SCHEMA_PARAMETERS_INVALID,
      headerProblem,
      'put x-mcp-header only on a string, integer or boolean property, with a header name of its own, e.g. Type.String({ "x-mcp-header": "Region", description: "..." })',
    );
  for (const [name, property] of Object.entries(parameters.properties as Record<string, JsonSchema>)) {
    if (!declaresSimpleType(property)) {
      fail(
        ContractErrorCode.SCHEMA_PROPERTY_TYPE_MISSING,
        `parameter '${name}' declares no simple JSON type (string, number, integer, boolean, object, array)`,
        `give it a type, e.g. Type.String({ description: '...' })`,
      );
    }
    if (typeof property.description !== 'string' || property.description.trim() === '') {
      fail(
        ContractErrorCode.SCHEMA_PROPERTY_DESCRIPTION_MISSING,
        `parameter '${name}' has no description; the model reads it to know what to send`,
        `add one: { description: 'What ${name} means to the tool.' }`,
      );
    }
  }
}

/** A property declares a simple type itself, or every branch of its `anyOf`, or every value of its `enum`/`const` has one. */
function declaresSimpleType(schema: JsonSchema): boolean {
  const type = schema.type;
  if (typeof type === 'string') return SIMPLE_TYPES.has(type) && type !== 'null';
  if (Array.isArray(type))
    return type.length > 0 && type.every((t) => SIMPLE_TYPES.has(t)) && type.some((t) => t !== 'null');
  if (Array.isArray(schema.anyOf))
    return (schema.anyOf as JsonSchema[]).every((branch) => branch.type === 'null' || declaresSimpleType(branch));
  if (Array.isArray(schema.enum))
    return schema.enum.length > 0 && schema.enum.every((value) => value !== undefined && typeof value !== 'function');
  return 'const' in schema;
}

/** Turns a name like `HelloWorld-Tool` into `hello_world_tool`. */
export function suggestSnakeCase(name: string): string {
  const snake = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^a-zA-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase()
    .replace(/_+/g, '_');
  return (snake || 'my_tool').slice(0, TOOL_NAME_MAX_LENGTH).replace(/_+$/, '');
}
