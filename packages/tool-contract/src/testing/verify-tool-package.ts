import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CapturingAdminLogger } from '../admin-logger.js';
import type { ToolPackageHost } from '../agent-tool.js';
import { ContractErrorCode } from '../errors.js';
import { ContractCheckCode, type ContractFinding } from './codes.js';
import { schemasInFreshProcess, type ProcessSchemaEntry } from './process-schemas.js';
import { checkSchemaSnapshot, SCHEMA_SNAPSHOT_FILE, type SchemaSnapshotResult } from './schema-snapshot.js';
import { verifyToolContract, type ContractToolFactory, type ToolContractReport } from './verify-tool-contract.js';
import { verifyPackageUnits, type PackageUnitsReport } from './verify-units.js';

/**
 * What a tool package's contract setup module exports (named exports, or a default export of this
 * shape), for tools that need more than a logger. Declared in the package's package.json:
 * `"aptix": { "toolPackage": true, "contract": { "setup": "./test/contract.setup.ts" } }`.
 *
 * @example
 * // test/contract.setup.ts
 * export const dependencies: ContractSetup['dependencies'] = () => ({ weatherClient: new FakeWeatherClient() });
 */
export interface ContractSetup {
  /** Constructor dependencies by name, or a function making them; merged over the package's own `createDependencies`. */
  readonly dependencies?:
    | Readonly<Record<string, unknown>>
    | ((host: ToolPackageHost) => Readonly<Record<string, unknown>> | Promise<Readonly<Record<string, unknown>>>);
  /** Full control over building instances. */
  readonly createTool?: ContractToolFactory;
  /** How long one garbage call may take, in milliseconds. */
  readonly callTimeoutMs?: number;
}

export interface VerifyToolPackageOptions {
  /** The module to check, relative to the package; default the package's own entry (`exports["."]` for `import`). */
  readonly entry?: string;
  /** Write the schema snapshot instead of comparing with it. */
  readonly update?: boolean;
  /** The snapshot file, relative to the package. Default `tool-schemas.json`. */
  readonly snapshotFile?: string;
  /** Compare schemas with two separate Node processes. Default true. */
  readonly crossProcess?: boolean;
  /** `node` arguments for those processes. */
  readonly nodeArguments?: readonly string[];
  /** The command that updates the snapshot, shown in messages. */
  readonly updateCommand?: string;
}

/** Everything `verifyToolPackage` found. */
export interface ToolPackageReport {
  readonly packageName: string;
  readonly packageDir: string;
  /** The module that was checked, when it was found. */
  readonly entry: string | undefined;
  /** The contract setup module used, relative to the package. */
  readonly setup: string | undefined;
  /** No violations in the package or any of its tools. */
  readonly ok: boolean;
  readonly tools: readonly ToolContractReport[];
  /** Package-level violations: the entry, the `tools` export, duplicates, the snapshot. */
  readonly violations: readonly ContractFinding[];
  readonly warnings: readonly ContractFinding[];
  readonly snapshot: SchemaSnapshotResult | undefined;
  /** The package's prompts and resources, checked like tools, and their snapshot (`unit-schemas.json`); undefined when the checks stopped before them. */
  readonly units?: PackageUnitsReport;
  readonly durationMs: number;
}

interface PackageJson {
  readonly name?: string;
  readonly main?: string;
  readonly exports?: unknown;
  readonly aptix?: { readonly contract?: { readonly setup?: string } };
}

const IMPORT_CONDITIONS = ['node', 'import', 'module-sync', 'default'];

/**
 * Runs the contract kit over a tool package, as its Nx `contract` target does: imports the package's
 * entry, checks each exported tool with `verifyToolContract` (schemas read again by two separate Node
 * processes), checks that tool names are unique, and compares the schemas with the committed snapshot.
 *
 * @example
 * const report = await verifyToolPackage('packages/tools/weather');
 * if (!report.ok) process.exitCode = 1;
 */
export async function verifyToolPackage(
  packageDir: string,
  options: VerifyToolPackageOptions = {},
): Promise<ToolPackageReport> {
  const started = performance.now();
  const dir = resolve(packageDir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
  const packageName = pkg.name ?? relative(process.cwd(), dir);
  const violations: ContractFinding[] = [];
  const warnings: ContractFinding[] = [];
  const finish = (
    fields: Pick<ToolPackageReport, 'entry' | 'setup' | 'tools' | 'snapshot' | 'units'>,
  ): ToolPackageReport => ({
    packageName,
    packageDir: dir,
    ...fields,
    ok: violations.length === 0 && fields.tools.every((tool) => tool.ok),
    violations,
    warnings,
    durationMs: performance.now() - started,
  });

  const entry = options.entry === undefined ? packageEntry(dir, pkg) : resolve(dir, options.entry);
  if (entry === undefined || !existsSync(entry)) {
    violations.push({
      code: ContractCheckCode.PACKAGE_IMPORT_FAILED,
      message:
        `${packageName}: its entry ` +
        `${entry === undefined ? '(none declared)' : relative(dir, entry)} does not exist. Fix: ` +
        `build the package first (the contract target depends on build), or declare "exports" in package.json.`,
    });
    return finish({ entry, setup: undefined, tools: [], snapshot: undefined });
  }

  // Two fresh processes read the schemas while this one checks everything else.
  const processReads =
    options.crossProcess === false
      ? undefined
      : [0, 1].map(() => settle(schemasInFreshProcess(entry, { nodeArguments: options.nodeArguments })));

  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
  } catch (error) {
    violations.push({
      code: ContractCheckCode.PACKAGE_IMPORT_FAILED,
      message: `${packageName}: importing ${relative(dir, entry)} failed: ${errorText(error)}. Fix: the entry must import cleanly with no setup.`,
    });
    await Promise.all(processReads ?? []);
    return finish({ entry, setup: undefined, tools: [], snapshot: undefined });
  }
  const tools = module.tools;
  if (!Array.isArray(tools) || tools.length === 0) {
    violations.push({
      code: ContractCheckCode.PACKAGE_TOOLS_MISSING,
      message:
        `${packageName}: ${relative(dir, entry)} exports ` +
        `${Array.isArray(tools) ? 'an empty `tools` list' : 'no `tools` list'}. Fix: export const ` +
        `tools = [YourTool] as const satisfies ToolList;`,
    });
    await Promise.all(processReads ?? []);
    return finish({ entry, setup: undefined, tools: [], snapshot: undefined });
  }

  const setupPath = pkg.aptix?.contract?.setup;
  const setup = await loadSetup(dir, packageName, setupPath, module, violations);
  const reads = processReads === undefined ? undefined : await Promise.all(processReads);

  const reports: ToolContractReport[] = [];
  // One tool at a time: the prototype checks watch the whole process.
  for (const [index, toolClass] of tools.entries()) {
    const otherProcessSchemas = reads?.map((read): ProcessSchemaEntry =>
      read.ok
        ? (read.value.tools[index] ?? { error: 'the tool list is shorter there' })
        : { error: errorText(read.error) },
    );
    reports.push(
      await verifyToolContract(toolClass, {
        dependencies: setup.dependencies,
        createTool: setup.createTool,
        callTimeoutMs: setup.callTimeoutMs,
        otherProcessSchemas,
      }),
    );
  }

  const owners = new Map<string, string>();
  for (const report of reports) {
    if (report.canonicalSchema === undefined) continue;
    const folded = report.tool.toLowerCase();
    const owner = owners.get(folded);
    if (owner === undefined) owners.set(folded, report.tool);
    else {
      const clash =
        owner === report.tool
          ? `more than one tool named "${owner}"`
          : `tools named "${owner}" and "${report.tool}", one name to a host (names are compared ignoring case)`;
      violations.push({
        code: ContractErrorCode.DUPLICATE_TOOL,
        message: `${packageName} exports ${clash}: a host would refuse to start. Fix: give each tool its own name, and list each class once.`,
      });
    }
  }

  const schemas = Object.fromEntries(
    reports.flatMap((report) =>
      report.canonicalSchema === undefined ? [] : [[report.tool, report.canonicalSchema] as const],
    ),
  );
  const snapshot = checkSchemaSnapshot({
    file: join(dir, options.snapshotFile ?? SCHEMA_SNAPSHOT_FILE),
    schemas,
    packageName,
    update: options.update,
    incomplete: reports.some((report) => report.canonicalSchema === undefined),
    updateCommand: options.updateCommand,
  });
  violations.push(...snapshot.violations);
  warnings.push(...snapshot.warnings);
  // Prompts and resources beside the tools: checked as a host checks them, snapshotted beside tool-schemas.json.
  const units = verifyPackageUnits(module, packageName, dir, {
    ...(options.update === undefined ? {} : { update: options.update }),
    ...(options.updateCommand === undefined ? {} : { updateCommand: options.updateCommand }),
  });
  violations.push(...units.violations);
  warnings.push(...units.warnings);
  return finish({ entry, setup: setupPath, tools: reports, snapshot, units });
}

interface LoadedSetup {
  readonly dependencies?: Readonly<Record<string, unknown>>;
  readonly createTool?: ContractToolFactory;
  readonly callTimeoutMs?: number;
}

/** The package's own `createDependencies` (what a host calls), then its contract setup module over it. */
async function loadSetup(
  dir: string,
  packageName: string,
  setupPath: string | undefined,
  module: Record<string, unknown>,
  violations: ContractFinding[],
): Promise<LoadedSetup> {
  const host: ToolPackageHost = { logger: new CapturingAdminLogger(), options: {} };
  let dependencies: Record<string, unknown> = {};
  if (typeof module.createDependencies === 'function') {
    try {
      dependencies = {
        ...((await (module.createDependencies as (host: ToolPackageHost) => unknown)(host)) as Record<string, unknown>),
      };
    } catch (error) {
      violations.push({
        code: ContractCheckCode.PACKAGE_SETUP_FAILED,
        message: `${packageName}: its createDependencies() threw: ${errorText(error)}. A host calls it at start-up and would fail the same way. Fix: make it work with only { logger }.`,
      });
    }
  }
  if (setupPath === undefined) return { dependencies };
  let setup: ContractSetup;
  try {
    const file = resolve(dir, setupPath);
    const loaded = (await importModule(file, dir)) as ContractSetup & { default?: ContractSetup };
    setup = loaded.default ?? loaded;
  } catch (error) {
    violations.push({
      code: ContractCheckCode.PACKAGE_SETUP_FAILED,
      message:
        `${packageName}: its contract setup module ${setupPath} could not be imported: ` +
        `${errorText(error)}. Fix: the path in package.json "aptix.contract.setup" is relative to ` +
        `the package; TypeScript needs tsx installed.`,
    });
    return { dependencies };
  }
  try {
    const extra = typeof setup.dependencies === 'function' ? await setup.dependencies(host) : setup.dependencies;
    dependencies = { ...dependencies, ...extra };
  } catch (error) {
    violations.push({
      code: ContractCheckCode.PACKAGE_SETUP_FAILED,
      message: `${packageName}: the dependencies of its contract setup module ${setupPath} threw: ${errorText(error)}.`,
    });
  }
  return { dependencies, createTool: setup.createTool, callTimeoutMs: setup.callTimeoutMs };
}

/** Imports a module; a TypeScript one through tsx's `tsImport`, resolved from the package. */
async function importModule(file: string, dir: string): Promise<unknown> {
  if (!/\.[cm]?tsx?$/.test(file)) return import(pathToFileURL(file).href);
  const api = createRequire(join(dir, 'package.json')).resolve('tsx/esm/api');
  const { tsImport } = (await import(pathToFileURL(api).href)) as {
    tsImport: (specifier: string, parent: string) => Promise<unknown>;
  };
  return tsImport(pathToFileURL(file).href, import.meta.url);
}

/** The file `import(packageName)` loads: `exports["."]` under Node's import conditions, else `main`. */
export function packageEntry(
  dir: string,
  pkg: { readonly main?: string; readonly exports?: unknown },
): string | undefined {
  const { exports } = pkg;
  let target: string | undefined;
  if (exports !== undefined && exports !== null) {
    const root =
      typeof exports === 'object' && !Array.isArray(exports) && Object.keys(exports).some((key) => key.startsWith('.'))
        ? (exports as Record<string, unknown>)['.']
        : exports;
    target = pickTarget(root);
  } else {
    target = pkg.main ?? 'index.js';
  }
  return target === undefined ? undefined : isAbsolute(target) ? target : resolve(dir, target);
}

function pickTarget(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = pickTarget(item);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [condition, next] of Object.entries(value)) {
      if (IMPORT_CONDITIONS.includes(condition)) {
        const found = pickTarget(next);
        if (found !== undefined) return found;
      }
    }
  }
  return undefined;
}

type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message.split('\n').slice(0, 3).join(' ')}`;
  return String(error);
}
