import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describeThrown, type AnyAgentToolClass, type ToolPackageHost } from '@aptix/tool-contract';
import { closest } from './http/validation-messages.js';
import type { ToolPackageConfig } from './tool-package-config.js';

/** A tool package as the host loaded it. */
export interface LoadedToolPackage {
  /** As written in the configuration. */
  readonly specifier: string;
  /** The package's name and version, when its package.json could be read. */
  readonly name: string;
  readonly version: string | undefined;
  /** The file that was imported. */
  readonly entry: string;
  /** The folder of the package's package.json (or of its entry): where its code lives, to tell its stack frames. */
  readonly folder: string;
  /** Its static `tools`, then those its `createTools` made. */
  readonly tools: readonly AnyAgentToolClass[];
  /** Its `prompts` and `resources` (exports and `createUnits`), as given: the host checks them against the contract. For an isolated package, proxies that run in its workers. */
  readonly prompts?: readonly unknown[];
  readonly resources?: readonly unknown[];
  /** What its `createDependencies` returned, checked to be a plain object. */
  readonly dependencies: Readonly<Record<string, unknown>>;
  readonly isolation: 'none' | 'worker';
  /** Ends what the package holds (its workers); a no-op for a package loaded in process. */
  close(): Promise<void>;
}

/** A tool package that cannot be loaded; the message names the package, what it did wrong and the fix. */
export class ToolPackageError extends Error {
  override readonly name = 'ToolPackageError';
}

const hostRequire = createRequire(import.meta.url);

/** `instanceof`, without running a trap: what a package threw may be a Proxy whose getPrototypeOf throws. */
function isToolPackageError(value: unknown): value is ToolPackageError {
  try {
    return value instanceof ToolPackageError;
  } catch {
    return false;
  }
}

/** A package's module, as far as the host reads it. */
export interface ToolPackageModule {
  readonly tools?: unknown;
  readonly createDependencies?: unknown;
  readonly createTools?: unknown;
  readonly createUnits?: unknown;
  readonly close?: unknown;
  readonly prompts?: unknown;
  readonly resources?: unknown;
}

/**
 * Runs `work` under a time limit. A package that waits forever (a lock, a server that never answers, a
 * top-level await on nothing) fails start-up with a message naming it, instead of hanging it silently.
 * (Synchronous code that never returns cannot be stopped in process: isolation is the answer to that.)
 */
export function withTimeLimit<T>(work: () => T | PromiseLike<T>, limitMs: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), limitMs);
    const done =
      <A extends unknown[]>(settle: (...args: A) => void) =>
      (...args: A) => {
        clearTimeout(timer);
        settle(...args);
      };
    try {
      Promise.resolve(work()).then(done(resolvePromise), done(reject));
    } catch (error) {
      done(reject)(error);
    }
  });
}

/** The package's name for messages: its npm name when known, and the specifier when it differs. */
function label(specifier: string, name?: string): string {
  return name === undefined || name === specifier ? `"${specifier}"` : `"${name}" (${specifier})`;
}

function fixTimeout(specifier: string, limitMs: number): string {
  return (
    `Fix: find what it waits for (a network call, a lock, a top-level await); if it is only ` +
    `slow, raise its limit: { "package": ${JSON.stringify(specifier)}, "startupTimeoutMs": ` +
    `${limitMs * 4} } in toolPackages, or startupTimeoutMs for every package.`
  );
}

/** Imports a package's entry under its time limit. */
export async function importToolPackage(
  specifier: string,
  baseDir: string,
  limitMs: number,
): Promise<{ module: ToolPackageModule; entry: string; name: string; version: string | undefined; folder: string }> {
  const entry = resolveEntry(specifier, baseDir);
  const meta = readPackageMeta(entry);
  const who = label(specifier, meta?.name);
  let module: ToolPackageModule;
  try {
    module = await withTimeLimit(
      () => import(pathToFileURL(entry).href) as Promise<ToolPackageModule>,
      limitMs,
      () =>
        new ToolPackageError(
          `Tool package ${who} did not finish importing within ${limitMs} ms (its entry ${entry} hangs). ${fixTimeout(specifier, limitMs)}`,
        ),
    );
  } catch (error) {
    if (isToolPackageError(error)) throw error;
    throw new ToolPackageError(
      `Tool package ${who} failed to load from ${entry}: importing it ${threwWithFix(error, 'build the package (its dist/ must exist) or fix that error.')}`,
      { cause: error },
    );
  }
  return {
    module,
    entry,
    name: meta?.name ?? specifier,
    version: meta?.version,
    folder: meta?.folder ?? dirname(entry),
  };
}

/** Reads `tools` (and runs `createDependencies`, `createTools`) of an imported package, each under its time limit. */
export async function setUpToolPackage(
  module: ToolPackageModule,
  who: { specifier: string; name: string; entry: string },
  host: ToolPackageHost,
  limitMs: number,
): Promise<{
  tools: AnyAgentToolClass[];
  dependencies: Record<string, unknown>;
  prompts: unknown[];
  resources: unknown[];
}> {
  const name = label(who.specifier, who.name);
  const read = <T>(what: string, get: () => T): T => {
    try {
      return get();
    } catch (error) {
      throw new ToolPackageError(
        `Tool package ${name}: reading its ${what} threw ${describeThrown(error)}. Fix: export plain values.`,
        { cause: error },
      );
    }
  };
  const staticTools = read('`tools` export', () => module.tools);
  if (!Array.isArray(staticTools)) {
    throw new ToolPackageError(
      `Tool package ${name} exports no \`tools\` array (got ${describeValue(staticTools)}). Fix: add \`export const tools = [YourTool] as const satisfies ToolList;\` to its entry (${who.entry}).`,
    );
  }
  const tools = read('`tools` array', () => [...(staticTools as unknown[])]) as AnyAgentToolClass[];
  // Prompts and resources beside the tools: optional lists, checked against the contract by the host.
  const [prompts, resources] = (['prompts', 'resources'] as const).map((exported) => {
    const value = read(`\`${exported}\` export`, () => module[exported]);
    if (value === undefined) return [];
    if (!Array.isArray(value))
      throw new ToolPackageError(
        `Tool package ${name} exports \`${exported}\` but it is ${describeValue(value)}, not an ` +
          `array. Fix: export \`const ${exported} = [...] as const satisfies ` +
          `${exported === 'prompts' ? 'PromptList' : 'ResourceList'};\`, or leave it out.`,
      );
    return read(`\`${exported}\` array`, () => [...(value as unknown[])]);
  }) as [unknown[], unknown[]];
  const createDependencies = read('`createDependencies` export', () => module.createDependencies);
  const createTools = read('`createTools` export', () => module.createTools);
  const createUnits = read('`createUnits` export', () => module.createUnits);
  for (const [exported, value] of [
    ['createDependencies', createDependencies],
    ['createTools', createTools],
    ['createUnits', createUnits],
  ] as const) {
    if (value !== undefined && typeof value !== 'function') {
      throw new ToolPackageError(
        `Tool package ${name} exports \`${exported}\` but it is ${describeValue(value)}, not a function. Fix: export a function of the host ({ logger, options }).`,
      );
    }
  }

  let dependencies: Record<string, unknown> = {};
  if (typeof createDependencies === 'function') {
    const provided = await runHook(
      name,
      who.specifier,
      'createDependencies',
      () => (createDependencies as (h: ToolPackageHost) => unknown)(host),
      limitMs,
    );
    dependencies = plainRecord(name, provided);
  }
  if (typeof createTools === 'function') {
    const made = await runHook(
      name,
      who.specifier,
      'createTools',
      () => (createTools as (h: ToolPackageHost) => unknown)(host),
      limitMs,
    );
    if (!Array.isArray(made)) {
      throw new ToolPackageError(
        `Tool package ${name}: createTools() returned ${describeValue(made)}; it must return an array of tool classes (a ToolList), or a promise of one.`,
      );
    }
    tools.push(...(read('createTools() result', () => [...(made as unknown[])]) as AnyAgentToolClass[]));
  }
  if (typeof createUnits === 'function') {
    const made = await runHook(
      name,
      who.specifier,
      'createUnits',
      () => (createUnits as (h: ToolPackageHost) => unknown)(host),
      limitMs,
    );
    if (typeof made !== 'object' || made === null || Array.isArray(made))
      throw new ToolPackageError(
        `Tool package ${name}: createUnits() returned ${describeValue(made)}; it must return { prompts?: [...], resources?: [...] }, or a promise of it.`,
      );
    const units = made as { prompts?: unknown; resources?: unknown };
    for (const [exported, list] of [
      ['prompts', prompts],
      ['resources', resources],
    ] as const) {
      const value = read(`createUnits() result's ${exported}`, () => units[exported]);
      if (value === undefined) continue;
      if (!Array.isArray(value))
        throw new ToolPackageError(
          `Tool package ${name}: createUnits() returned ${exported} as ${describeValue(value)}; it must return { prompts?: [...], resources?: [...] }, or a promise of it.`,
        );
      list.push(...read(`createUnits() ${exported}`, () => [...(value as unknown[])]));
    }
  }
  return { tools, dependencies, prompts, resources };
}

async function runHook(
  name: string,
  specifier: string,
  hook: string,
  call: () => unknown,
  limitMs: number,
): Promise<unknown> {
  try {
    return await withTimeLimit(
      call,
      limitMs,
      () =>
        new ToolPackageError(
          `Tool package ${name}: ${hook}() did not finish within ${limitMs} ms. ${fixTimeout(specifier, limitMs)}`,
        ),
    );
  } catch (error) {
    if (isToolPackageError(error)) throw error;
    throw new ToolPackageError(
      `Tool package ${name}: ${hook}() ${threwWithFix(error, 'make it work with what the host hands it ({ logger, options }), or fix that error.')}`,
      { cause: error },
    );
  }
}

/** "threw <error>. Fix: <fix>", or only the error's own Fix: when it brings one (a bridge's unreachable server does), so a message has one. */
function threwWithFix(error: unknown, fix: string): string {
  const thrown = describeThrown(error).replace(/\.+$/, '');
  return /\bFix:/.test(thrown) ? `threw ${thrown}.` : `threw ${thrown}. Fix: ${fix}`;
}

/** `createDependencies` must give a plain object: a string would otherwise register dependencies named "0", "1", … */
function plainRecord(name: string, value: unknown): Record<string, unknown> {
  const refuse = (why: string) =>
    new ToolPackageError(
      `Tool package ${name}: createDependencies() returned ${why}; it must return a plain object of dependencies by constructor-parameter name, e.g. { weatherClient: new WeatherClient() }.`,
    );
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw refuse(describeValue(value));
  let entries: Array<[string, unknown]>;
  try {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) throw refuse(describeValue(value));
    entries = Object.entries(value);
  } catch (error) {
    if (isToolPackageError(error)) throw error;
    throw refuse(`an object that cannot be read (${describeThrown(error)})`);
  }
  return Object.fromEntries(entries);
}

/** A returned or exported value, for messages. */
function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value !== null && typeof value === 'object') {
    try {
      const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
      return typeof ctor === 'string' && ctor !== 'Object' ? `an instance of ${ctor}` : 'an object';
    } catch {
      return 'an object that cannot be read';
    }
  }
  return describeThrown(value);
}

/** Imports and sets up one package in the host process. */
export async function loadInProcess(
  config: ToolPackageConfig,
  baseDir: string,
  host: ToolPackageHost,
  limitMs: number,
): Promise<LoadedToolPackage> {
  const imported = await importToolPackage(config.specifier, baseDir, limitMs);
  const { tools, dependencies, prompts, resources } = await setUpToolPackage(
    imported.module,
    { specifier: config.specifier, name: imported.name, entry: imported.entry },
    host,
    limitMs,
  );
  return {
    specifier: config.specifier,
    name: imported.name,
    version: imported.version,
    entry: imported.entry,
    folder: imported.folder,
    tools,
    prompts,
    resources,
    dependencies,
    isolation: 'none',
    close: () => closeModule(imported.module, label(config.specifier, imported.name), limitMs),
  };
}

/**
 * Runs a package's `close` export, if it has one, when the host stops: what it started in `createTools`
 * (an MCP bridge's connections, say) ends with the host. Under the package's time limit; a failure is
 * swallowed, because the host is stopping anyway and one package must not keep the others from closing.
 */
export async function closeModule(module: ToolPackageModule, name: string, limitMs: number): Promise<void> {
  let close: unknown;
  try {
    close = module.close;
  } catch {
    return;
  }
  if (typeof close !== 'function') return;
  await withTimeLimit(
    () => (close as () => unknown)(),
    limitMs,
    () => new ToolPackageError(`Tool package ${name}: close() did not finish within ${limitMs} ms.`),
  ).catch(() => undefined);
}

/** Where a specifier's entry file is: names from `baseDir` then from the host; paths against `baseDir`. */
export function resolveEntry(specifier: string, baseDir: string): string {
  const isPath = specifier.startsWith('.') || isAbsolute(specifier) || specifier.startsWith('file:');
  if (isPath) {
    const path = specifier.startsWith('file:') ? new URL(specifier).pathname : resolve(baseDir, specifier);
    let entry: string;
    try {
      // A folder resolves through its package.json (exports, then main), like an installed package.
      entry = createRequire(join(baseDir, 'noop.js')).resolve(path);
    } catch (error) {
      throw new ToolPackageError(
        `Tool package "${specifier}" was not found at ${path}: ${(error as Error).message.split('\n')[0]}. Fix: point toolPackages at a built package folder or its entry file.`,
        { cause: error },
      );
    }
    // A path straight to a JSON file (the configuration file itself, a package.json) is no package: say so, before an import fails obscurely.
    if (extname(entry) === '.json') {
      const what =
        basename(entry) === 'package.json'
          ? "a package's package.json"
          : `a JSON file${basename(entry) === 'aptix.config.json' ? ' (the configuration file itself)' : ''}`;
      throw new ToolPackageError(
        `Tool package "${specifier}" resolves to the file ${entry}, which is ${what}, not a tool ` +
          `package. Fix: point toolPackages at a tool package's folder (the one holding its ` +
          `package.json), e.g. "./acme-weather", or at its built entry file (dist/index.js).`,
      );
    }
    return entry;
  }
  for (const from of [createRequire(join(baseDir, 'noop.js')), hostRequire]) {
    try {
      return from.resolve(specifier);
    } catch {
      // try the next place
    }
  }
  // A name one slip away from an installed package is a typo: installing it would fetch another package, or nothing.
  const guess = nearInstalled(specifier, installedPackages([baseDir, ...(hostRequire.resolve.paths('') ?? [])]));
  if (guess !== undefined)
    throw new ToolPackageError(
      `Tool package "${specifier}" is not installed (looked from ${baseDir} and from the host); "${guess}" is. Fix: did you mean "${guess}"? Correct its name in toolPackages.`,
    );
  throw new ToolPackageError(
    `Tool package "${specifier}" is not installed (looked from ${baseDir} and from the host). Fix: \`npm install ${specifier}\`, or correct its name in toolPackages.`,
  );
}

/** The installed package in the same scope whose name is one slip away from `specifier`'s, if any. */
function nearInstalled(specifier: string, installed: readonly string[]): string | undefined {
  const scope = (name: string) => (name.startsWith('@') ? name.slice(0, name.indexOf('/') + 1) : '');
  const own = scope(specifier);
  const guess = closest(
    specifier.slice(own.length),
    installed.filter((name) => scope(name) === own).map((name) => name.slice(own.length)),
  );
  return guess === undefined ? undefined : `${own}${guess}`;
}

/** The names of the packages in the node_modules folders Node would look in from each of `dirs` (a folder, or a node_modules folder itself). */
function installedPackages(dirs: readonly string[]): string[] {
  const folders = new Set<string>();
  for (const dir of dirs) {
    if (basename(dir) === 'node_modules') folders.add(dir);
    else
      for (let at = resolve(dir); ; at = dirname(at)) {
        folders.add(join(at, 'node_modules'));
        if (dirname(at) === at) break;
      }
  }
  const names = new Set<string>();
  const list = (dir: string) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  for (const folder of folders) {
    for (const entry of list(folder)) {
      if (entry.startsWith('.')) continue;
      if (entry.startsWith('@')) for (const scoped of list(join(folder, entry))) names.add(`${entry}/${scoped}`);
      else names.add(entry);
    }
  }
  return [...names];
}

/** The name, version and folder of the package an entry file belongs to (the nearest package.json with a name). */
export function readPackageMeta(entry: string): { name?: string; version?: string; folder: string } | undefined {
  for (let dir = dirname(entry); ; dir = dirname(dir)) {
    try {
      const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (meta.name) return { ...meta, folder: dir };
    } catch {
      // keep walking up
    }
    if (dirname(dir) === dir) return undefined;
  }
}
