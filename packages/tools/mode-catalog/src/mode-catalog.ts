import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { invalidCatalog, ModeCatalogError, ModeCatalogErrorCode, type ModeCatalogIssue } from './mode-catalog-error.js';
import {
  MODE_ID_PATTERN,
  MODE_KEY_PATTERN,
  ModeCatalogFile,
  type AgentModeCatalogService,
  type AgentModeSummary,
} from './mode-summary.js';

/**
 * The catalog that ships with this package (`modes.json`): `general` (the default), `ddr_authoring`
 * and `tool_diagnostics`. Resolved from this module, so it is right from `src/` and from `dist/`.
 */
export const defaultCatalogPath: string = fileURLToPath(new URL('../modes.json', import.meta.url));

const IN_MEMORY = '(in-memory catalog)';

/**
 * A validated, deeply frozen mode catalog: the host's `AgentModeCatalogService` for `agent_list_modes`,
 * and the `ModeDirectory` of `@aptix/agent-sessions` (`modeKeys()`, `defaultModeKey()`), so one object
 * tells the tools and the session store which modes exist.
 *
 * Every check happens when it is built: the schema, unique keys and ids, exactly one default.
 * Nothing in it changes afterwards; `getAllModes()` returns the same frozen array on every call.
 *
 * @example
 * const catalog = await loadModeCatalog();            // the shipped modes.json
 * const keys = await catalog.modeKeys();              // ['general', 'ddr_authoring', 'tool_diagnostics']
 * const custom = await loadModeCatalog('./config/modes.json');
 */
export class ModeCatalog implements AgentModeCatalogService {
  /** The file the catalog was read from, or `(in-memory catalog)`. Named in every error about it. */
  readonly source: string;
  /** Every mode, in catalog order. Frozen, down to the arrays of each mode. */
  readonly modes: readonly AgentModeSummary[];
  /** The one mode with `isDefault: true`. */
  readonly defaultMode: AgentModeSummary;
  /** The mode keys, in catalog order. Frozen. */
  readonly keys: readonly string[];
  readonly #byKey: ReadonlyMap<string, AgentModeSummary>;

  private constructor(modes: readonly AgentModeSummary[], source: string) {
    this.source = source;
    this.modes = modes;
    this.defaultMode = modes.find((mode) => mode.isDefault)!;
    this.keys = Object.freeze(modes.map((mode) => mode.key));
    this.#byKey = new Map(modes.map((mode) => [mode.key, mode]));
    Object.freeze(this);
  }

  /**
   * Builds a catalog from data already in memory, checked exactly as a file is. The data is copied:
   * later changes to `modes` do not reach the catalog.
   * @throws {ModeCatalogError} naming `source` and the JSON path of the first bad field.
   * @example const catalog = ModeCatalog.fromModes([{ id: '…', key: 'general', …, isDefault: true, tools: [] }]);
   */
  static fromModes(modes: readonly AgentModeSummary[], source: string = IN_MEMORY): ModeCatalog {
    return ModeCatalog.#fromData({ modes }, source);
  }

  /**
   * Parses the text of a catalog file (`{ "modes": [ ... ] }`) and checks it.
   * @throws {ModeCatalogError} `CATALOG_MALFORMED_JSON` with the line and column, or any check's code.
   */
  static fromJson(text: string, source: string = IN_MEMORY): ModeCatalog {
    return ModeCatalog.#fromData(parseJson(text, source), source);
  }

  static #fromData(data: unknown, source: string): ModeCatalog {
    const validate = catalogValidator();
    // Validated on a copy: ajv never sees, and the catalog never shares, the caller's objects.
    const copy = structuredCloneOrFail(data, source);
    if (!validate(copy))
      throw invalidCatalog(ModeCatalogErrorCode.CATALOG_INVALID, source, schemaIssues(validate.errors ?? []));
    const { modes } = copy as ModeCatalogFile;
    checkUnique(modes, 'key', ModeCatalogErrorCode.DUPLICATE_MODE_KEY, source);
    checkUnique(modes, 'id', ModeCatalogErrorCode.DUPLICATE_MODE_ID, source);
    checkOneDefault(modes, source);
    return new ModeCatalog(deepFreeze(modes), source);
  }

  /** TUL-010's `GetAllModesAsync`: every mode, in catalog order. Always the same frozen array. */
  async getAllModes(signal?: AbortSignal): Promise<readonly AgentModeSummary[]> {
    signal?.throwIfAborted();
    return this.modes;
  }

  /** The mode with this key, or undefined. */
  getMode(key: string): AgentModeSummary | undefined {
    return this.#byKey.get(key);
  }

  /**
   * The mode with this key.
   * @throws {ModeCatalogError} `UNKNOWN_MODE`, listing the valid keys.
   */
  requireMode(key: string): AgentModeSummary {
    const mode = this.#byKey.get(key);
    if (mode === undefined) throw unknownModeError(key, this.keys, this.source);
    return mode;
  }

  /** `ModeDirectory.modeKeys`: the valid mode keys, in catalog order. */
  async modeKeys(signal?: AbortSignal): Promise<readonly string[]> {
    signal?.throwIfAborted();
    return this.keys;
  }

  /** `ModeDirectory.defaultModeKey`: the key of the default mode. */
  async defaultModeKey(signal?: AbortSignal): Promise<string> {
    signal?.throwIfAborted();
    return this.defaultMode.key;
  }
}

/**
 * Reads and checks a catalog file; the shipped `modes.json` when no path is given.
 * @throws {ModeCatalogError} naming the file and the JSON path of the bad field (`$.modes[1].id`).
 * @example const catalog = await loadModeCatalog(process.env.APTIX_MODES ?? defaultCatalogPath);
 */
export async function loadModeCatalog(path: string | URL = defaultCatalogPath): Promise<ModeCatalog> {
  const source = toPath(path);
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (error) {
    throw unreadable(source, error);
  }
  return ModeCatalog.fromJson(text, source);
}

/** {@link loadModeCatalog}, synchronously: for composition roots that cannot await (an awilix `asFunction`). */
export function loadModeCatalogSync(path: string | URL = defaultCatalogPath): ModeCatalog {
  const source = toPath(path);
  let text: string;
  try {
    text = readFileSync(source, 'utf8');
  } catch (error) {
    throw unreadable(source, error);
  }
  return ModeCatalog.fromJson(text, source);
}

/** The error for a mode key the catalog does not hold: it lists the valid keys. */
export function unknownModeError(key: string, validKeys: readonly string[], source: string): ModeCatalogError {
  return new ModeCatalogError(
    ModeCatalogErrorCode.UNKNOWN_MODE,
    `Unknown mode ${JSON.stringify(key)}: mode catalog ${source} has no mode with that key. Valid modes: ${validKeys.join(', ') || 'none'}.`,
    { source, issues: [{ path: '$.modes', problem: `has no mode with key ${JSON.stringify(key)}` }] },
  );
}

function toPath(path: string | URL): string {
  return path instanceof URL ? fileURLToPath(path) : path;
}

function unreadable(source: string, error: unknown): ModeCatalogError {
  const reason = error instanceof Error ? error.message : String(error);
  return new ModeCatalogError(
    ModeCatalogErrorCode.CATALOG_UNREADABLE,
    `Mode catalog ${source} could not be read: ${reason}`,
    {
      source,
      issues: [{ path: '$', problem: `could not be read: ${reason}` }],
      cause: error,
    },
  );
}

function parseJson(text: string, source: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const where = locate(body, reason);
    const problem = `is not valid JSON${where}: ${reason}`;
    throw new ModeCatalogError(ModeCatalogErrorCode.CATALOG_MALFORMED_JSON, `Mode catalog ${source} ${problem}`, {
      source,
      issues: [{ path: '$', problem }],
      cause: error,
    });
  }
}

/** ` (line 3, column 5)` from the position V8 reports, or the end of the text when it ran out. */
function locate(text: string, reason: string): string {
  const reported = /line (\d+) column (\d+)/.exec(reason);
  if (reported) return ` (line ${reported[1]}, column ${reported[2]})`;
  const position = /position (\d+)/.exec(reason);
  const offset = position ? Number(position[1]) : /end of JSON input/i.test(reason) ? text.length : undefined;
  if (offset === undefined) return '';
  const before = text.slice(0, offset).split('\n');
  return ` (line ${before.length}, column ${before[before.length - 1]!.length + 1})`;
}

function structuredCloneOrFail(data: unknown, source: string): unknown {
  try {
    return structuredClone(data);
  } catch (error) {
    const problem = `is not plain JSON data: ${error instanceof Error ? error.message : String(error)}`;
    throw new ModeCatalogError(ModeCatalogErrorCode.CATALOG_INVALID, `Mode catalog ${source} ${problem}`, {
      source,
      issues: [{ path: '$', problem }],
      cause: error,
    });
  }
}

let validator: ValidateFunction | undefined;

/** Compiled once, on first use. Strict, so a schema mistake here fails the package's own tests. */
function catalogValidator(): ValidateFunction {
  if (validator === undefined) {
    const ajv = new Ajv({ allErrors: true, strict: true, verbose: true, coerceTypes: false, useDefaults: false });
    // Through JSON: TypeBox marks its schemas with symbol keys, which are no JSON Schema.
    validator = ajv.compile(JSON.parse(JSON.stringify(ModeCatalogFile)) as object);
  }
  return validator;
}

const PATTERN_MEANINGS: Record<string, string> = {
  [MODE_ID_PATTERN]: 'must be 32 lowercase hexadecimal characters (a GUID without hyphens)',
  [MODE_KEY_PATTERN]:
    'must be snake_case (lowercase letters and digits in words joined by single underscores, starting with a letter)',
};

/** ajv's errors as issues a person can act on, one per field, in document order. */
function schemaIssues(errors: readonly ErrorObject[]): ModeCatalogIssue[] {
  const issues: ModeCatalogIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const issue = describeSchemaError(error);
    const id = `${issue.path}\u0000${issue.problem}`;
    if (!seen.has(id)) {
      seen.add(id);
      issues.push(issue);
    }
  }
  return issues;
}

function describeSchemaError(error: ErrorObject): ModeCatalogIssue {
  const params = error.params as Record<string, unknown>;
  const path = jsonPath(error.instancePath);
  switch (error.keyword) {
    case 'required':
      return {
        path: jsonPath(`${error.instancePath}/${String(params.missingProperty)}`),
        problem: 'is required but missing',
      };
    case 'additionalProperties': {
      const known = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return {
        path: jsonPath(`${error.instancePath}/${String(params.additionalProperty)}`),
        problem: `is not a known field (known fields: ${known.join(', ')})`,
      };
    }
    case 'type':
      return { path, problem: `must be ${article(String(params.type))}, got ${describe(error.data)}` };
    case 'pattern':
      return {
        path,
        problem: `${PATTERN_MEANINGS[String(params.pattern)] ?? `must match ${String(params.pattern)}`}, got ${describe(error.data)}`,
      };
    case 'minLength':
      return { path, problem: 'must not be empty' };
    case 'maxLength':
      return {
        path,
        problem: `must be at most ${String(params.limit)} characters long, got ${String((error.data as string).length)}`,
      };
    case 'minItems':
      return { path, problem: `must hold at least ${String(params.limit)} item(s), got none` };
    case 'uniqueItems': {
      const [first, second] = [Number(params.i), Number(params.j)].sort((a, b) => a - b) as [number, number];
      return {
        path,
        problem: `lists ${describe((error.data as unknown[])[first])} twice (items ${first} and ${second})`,
      };
    }
    default:
      return { path, problem: `${error.message ?? 'is invalid'}, got ${describe(error.data)}` };
  }
}

/** `/modes/1/id` → `$.modes[1].id`. */
function jsonPath(pointer: string): string {
  let out = '$';
  if (pointer === '') return out;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function article(type: string): string {
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string')
    return value.length > 60 ? `${JSON.stringify(value.slice(0, 60)).slice(0, -1)}…"` : JSON.stringify(value);
  return `${typeof value} ${String(value)}`;
}

function checkUnique(
  modes: readonly AgentModeSummary[],
  field: 'key' | 'id',
  code: ModeCatalogErrorCode,
  source: string,
): void {
  const first = new Map<string, number>();
  const issues: ModeCatalogIssue[] = [];
  modes.forEach((mode, index) => {
    const earlier = first.get(mode[field]);
    if (earlier === undefined) first.set(mode[field], index);
    else
      issues.push({
        path: `$.modes[${index}].${field}`,
        problem: `repeats the ${field} ${JSON.stringify(mode[field])} of $.modes[${earlier}]; every mode needs its own ${field}`,
      });
  });
  if (issues.length > 0) throw invalidCatalog(code, source, issues);
}

function checkOneDefault(modes: readonly AgentModeSummary[], source: string): void {
  const defaults = modes.flatMap((mode, index) => (mode.isDefault ? [index] : []));
  if (defaults.length === 0) {
    throw invalidCatalog(ModeCatalogErrorCode.NO_DEFAULT_MODE, source, [
      {
        path: '$.modes',
        problem: `has no default mode; set "isDefault": true on exactly one mode (keys: ${modes.map((mode) => mode.key).join(', ')})`,
      },
    ]);
  }
  if (defaults.length > 1) {
    const [firstDefault, ...others] = defaults as [number, ...number[]];
    throw invalidCatalog(
      ModeCatalogErrorCode.MULTIPLE_DEFAULT_MODES,
      source,
      others.map((index) => ({
        path: `$.modes[${index}].isDefault`,
        problem: `is true, but $.modes[${firstDefault}] (${JSON.stringify(modes[firstDefault]!.key)}) is already the default; exactly one mode may be the default`,
      })),
    );
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
