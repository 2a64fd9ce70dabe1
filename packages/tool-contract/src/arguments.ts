import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import { describe, describeErrors, type ArgumentIssue } from './argument-issues.js';
import type SecureJson from 'secure-json-parse';
import { ajvFor } from './ajv.js';
import { closedToPrototypeKeys } from './closed-schema.js';
import { acceptsNull, type JsonSchema } from './schema.js';

export type { ArgumentIssue } from './argument-issues.js';

export type DecodedArguments<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly message: string; readonly issues: readonly ArgumentIssue[] };

interface CompiledArguments {
  readonly validate: ValidateFunction;
  readonly nulls: NullPlan | undefined;
  readonly known: string;
  /** No value the schema accepts can hold a prototype key (see {@link closedToPrototypeKeys}). */
  readonly closed: boolean;
}

/** Where a `null` sent for an optional, non-nullable property (strict mode's way of omitting it) is dropped. */
interface NullPlan {
  readonly strip: readonly string[];
  readonly nested: ReadonlyArray<readonly [string, NullPlan]>;
  readonly items: NullPlan | undefined;
}

const compiled = new WeakMap<object, CompiledArguments>();

/**
 * The data context of a top-level validation, as ajv's validators default it (`{}`: path "", the data
 * as its own root). Passed explicitly, one frozen object for every call, because the default is an
 * object each validator allocates per call, and the validators only read it.
 */
const TOP_LEVEL = Object.freeze({ instancePath: '' }) as Parameters<ValidateFunction>[1];
let last: { readonly schema: JsonSchema; readonly entry: CompiledArguments } | undefined;

/**
 * Compiles (once per schema object) the validator for a tool's parameters. Compilation is lazy,
 * on a tool's first call, because compiling every validator at start-up costs far more than registering.
 * Throws when ajv rejects the schema; the registry catches such a schema before it gets here.
 */
export function compileArguments(schema: JsonSchema): CompiledArguments {
  // The last schema asked about, ahead of the WeakMap: calls of one tool in a row are the common case.
  if (schema === last?.schema) return last.entry;
  let entry = compiled.get(schema);
  if (entry === undefined) {
    const properties = (schema.properties ?? {}) as Record<string, unknown>;
    entry = {
      validate: ajvFor(schema).compile(schema),
      nulls: planNulls(schema),
      known: Object.keys(properties).join(', '),
      closed: closedToPrototypeKeys(schema),
    };
    compiled.set(schema, entry);
  }
  last = { schema, entry };
  return entry;
}

function planNulls(schema: JsonSchema): NullPlan | undefined {
  let items: NullPlan | undefined;
  const strip: string[] = [];
  const nested: Array<readonly [string, NullPlan]> = [];
  if (schema.properties !== undefined) {
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, child] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
      if (!required.has(name) && !acceptsNull(child)) strip.push(name);
      const plan = planNulls(child);
      if (plan) nested.push([name, plan]);
    }
  }
  if (schema.items !== undefined && !Array.isArray(schema.items)) items = planNulls(schema.items as JsonSchema);
  return strip.length === 0 && nested.length === 0 && items === undefined ? undefined : { strip, nested, items };
}

function applyNulls(plan: NullPlan, value: unknown): void {
  if (Array.isArray(value)) {
    if (plan.items) for (const item of value) applyNulls(plan.items, item);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const record = value as Record<string, unknown>;
  // Indexed loops: this runs on every call of most tools, and for-of costs an iterator here.
  const { strip, nested } = plan;
  for (let i = 0; i < strip.length; i++) if (record[strip[i]!] === null) delete record[strip[i]!];
  for (let i = 0; i < nested.length; i++) applyNulls(nested[i]![1], record[nested[i]![0]]);
}

/**
 * Parses a tool's raw arguments (once), refusing prototype keys.
 * Returns the parsed value, or the reason it cannot be used.
 */
export function parseArgumentsJson(toolName: string, input: unknown): DecodedArguments<unknown> {
  return parseJson(toolName, input);
}

/**
 * Who the messages name: the tool's name, or the tool itself, whose `name` is read only for a message
 * (on a tool class's instance it is a getter, and most calls need no message).
 */
type Naming = string | { readonly name: string };

function parseJson(toolName: Naming, input: unknown): DecodedArguments<unknown> {
  if (typeof input !== 'string') {
    if (input === null || input === undefined)
      return failure(toolName, [
        { path: '(arguments)', problem: 'no arguments were sent; send a JSON object such as {}' },
      ]);
    return { ok: true, value: input };
  }
  // A text that starts with '{' (nearly every one) is not blank: only others are trimmed to find out.
  if (input.length === 0 || (input.charCodeAt(0) !== 0x7b && input.trim() === ''))
    return failure(toolName, [
      { path: '(arguments)', problem: 'no arguments were sent; send a JSON object such as {}' },
    ]);
  try {
    return { ok: true, value: parseJsonSafely(input) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const problem = /prototype/i.test(reason)
      ? 'the arguments contain a forbidden key (__proto__, or constructor.prototype); remove it'
      : `the arguments are not valid JSON (${reason.split('\n')[0]}); send one JSON object`;
    return failure(toolName, [{ path: '(arguments)', problem }]);
  }
}

const FORBIDDEN_KEYS = { protoAction: 'error', constructorAction: 'error' } as const;
const requireCjs = createRequire(import.meta.url);
let secureJson: typeof SecureJson | undefined;

/** secure-json-parse, loaded the first time a text needs it: most never do, and importing it costs milliseconds. */
function sjson(): typeof SecureJson {
  return (secureJson ??= requireCjs('secure-json-parse') as typeof SecureJson);
}

/**
 * `JSON.parse`, refusing `__proto__` and `constructor.prototype` keys. secure-json-parse tests every
 * text with two regular expressions; a text with no backslash (so no escaped key) and neither word in
 * it cannot hold such a key, so only the texts that might are scanned.
 */
function parseJsonSafely(text: string): unknown {
  if (text.charCodeAt(0) === 0xfeff) return sjson().parse(text, undefined, FORBIDDEN_KEYS);
  const value: unknown = JSON.parse(text);
  if (
    value !== null &&
    typeof value === 'object' &&
    (text.includes('\\') || text.includes('__proto__') || text.includes('constructor'))
  ) {
    sjson().scan(value, FORBIDDEN_KEYS);
  }
  return value;
}

/**
 * Checks parsed arguments against a tool's parameters schema: nulls sent for optional properties are
 * dropped first (see `toStrictMode`), then every offending field is reported at once.
 */
export function validateArguments<T>(toolName: string, schema: JsonSchema, value: unknown): DecodedArguments<T> {
  return validateValue<T>(toolName, schema, value, false);
}

/** `scanned`: the value was parsed here from JSON text, whose prototype keys parseJsonSafely refused already. */
function validateValue<T>(toolName: Naming, schema: JsonSchema, value: unknown, scanned: boolean): DecodedArguments<T> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return failure(toolName, [{ path: '(arguments)', problem: `must be a JSON object, got ${describe(value)}` }]);
  }
  if (!scanned && hasPrototypeKey(value)) {
    return failure(toolName, [
      {
        path: '(arguments)',
        problem: 'the arguments contain a forbidden key (__proto__, or constructor.prototype); remove it',
      },
    ]);
  }
  const { validate, nulls, known } = compileArguments(schema);
  if (nulls) applyNulls(nulls, value);
  if (validate(value, TOP_LEVEL)) return { ok: true, value: value as T };
  return failure(toolName, describeErrors(validate.errors ?? [], value, known));
}

/** Parse, then validate: what the executor and `TypedAgentTool` run on every call. */
export function decodeArguments<T>(toolName: string, schema: JsonSchema, input: unknown): DecodedArguments<T> {
  return decodeFor<T>(toolName, schema, input);
}

/** {@link decodeArguments} for a tool, whose name is read only if the arguments are refused. @internal */
export function decodeFor<T>(toolName: Naming, schema: JsonSchema, input: unknown): DecodedArguments<T> {
  const value = decodedValue(toolName, schema, input);
  return value === REFUSED ? takeRefusal() : { ok: true, value: value as T };
}

type Refusal = Extract<DecodedArguments<never>, { ok: false }>;

/** What {@link decodedValue} answers for arguments it refuses (never a value: only objects pass). @internal */
export const REFUSED: unique symbol = Symbol('refused');
/** Why the last {@link decodedValue} answered REFUSED: set just before, read at once by its caller. */
let refusal: Refusal | undefined;

/** The reason of the refusal {@link decodedValue} just answered. @internal */
export function takeRefusal(): Refusal {
  const taken = refusal!;
  refusal = undefined;
  return taken;
}

function refuse(decoded: DecodedArguments<unknown>): unknown {
  if (decoded.ok) return decoded.value;
  refusal = decoded;
  return REFUSED;
}

/**
 * {@link decodeFor} without its `{ ok, value }` answer, which TypedAgentTool's own decode would make
 * on every call and drop at once: the value, or REFUSED, whose reason {@link takeRefusal} then gives.
 * @internal
 */
export function decodedValue(toolName: Naming, schema: JsonSchema, input: unknown): unknown {
  // The common case, a text that starts with '{', parsed and checked without a wrapper object in between.
  if (typeof input === 'string' && input.charCodeAt(0) === 0x7b) {
    const plan = compileArguments(schema);
    let value: unknown;
    try {
      // A schema closed to prototype keys refuses them itself: the text is scanned only if it is refused.
      value = plan.closed ? JSON.parse(input) : parseJsonSafely(input);
    } catch {
      return refuse(parseJson(toolName, input)); // the same parse fails again, with its message
    }
    if (!plan.closed) return refuse(validateValue(toolName, schema, value, true));
    if (plan.nulls) applyNulls(plan.nulls, value);
    if (plan.validate(value, TOP_LEVEL)) return value;
    const errors = plan.validate.errors ?? [];
    // Refused: for a prototype key, the reason given is that key, as for any schema.
    const safe = parseJson(toolName, input);
    return refuse(safe.ok ? failure(toolName, describeErrors(errors, value, plan.known)) : safe);
  }
  const parsed = parseJson(toolName, input);
  return refuse(parsed.ok ? validateValue(toolName, schema, parsed.value, typeof input === 'string') : parsed);
}

function failure(naming: Naming, issues: ArgumentIssue[]): DecodedArguments<never> {
  const toolName = typeof naming === 'string' ? naming : naming.name;
  const detail = issues
    .map((issue) => (issue.path === '(arguments)' ? issue.problem : `'${issue.path}' ${issue.problem}`))
    .join('; ');
  return { ok: false, message: `Invalid arguments for ${toolName}: ${detail}.`, issues };
}

/** True when an object built elsewhere (an HTTP body, say) carries a key that could pollute a prototype. */
function hasPrototypeKey(value: object): boolean {
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return true;
  const ctor = (value as { constructor?: unknown }).constructor;
  return (
    Object.prototype.hasOwnProperty.call(value, 'constructor') &&
    ctor !== null &&
    typeof ctor === 'object' &&
    Object.prototype.hasOwnProperty.call(ctor, 'prototype')
  );
}
