import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyAgentToolClass, ToolPackage } from '@aptix/tool-contract';

/** A tool package as the host loaded it. */
export interface LoadedToolPackage {
  /** As written in the configuration. */
  readonly specifier: string;
  /** The package's name and version, when its package.json could be read. */
  readonly name: string;
  readonly version: string | undefined;
  /** The file that was imported. */
  readonly entry: string;
  readonly tools: readonly AnyAgentToolClass[];
  readonly createDependencies: ToolPackage['createDependencies'];
}

/** A tool package that cannot be loaded; the message names the package and the fix. */
export class ToolPackageError extends Error {
  override readonly name = 'ToolPackageError';
}

const hostRequire = createRequire(import.meta.url);

/**
 * Imports each configured tool package with dynamic `import()`, so a package installed from npm is
 * added by configuration alone. Names resolve from `baseDir` (the config file's folder), then from
 * the host itself (the first-party packages); paths resolve against `baseDir`.
 */
export async function loadToolPackages(specifiers: readonly string[], baseDir: string): Promise<LoadedToolPackage[]> {
  const loaded: LoadedToolPackage[] = [];
  for (const specifier of specifiers) loaded.push(await loadToolPackage(specifier, baseDir));
  return loaded;
}

async function loadToolPackage(specifier: string, baseDir: string): Promise<LoadedToolPackage> {
  const entry = resolveEntry(specifier, baseDir);
  let module: Partial<ToolPackage> & Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(entry).href)) as Partial<ToolPackage> & Record<string, unknown>;
  } catch (error) {
    throw new ToolPackageError(`Tool package "${specifier}" failed to load from ${entry}: ${(error as Error).message}. Fix: build the package (its dist/ must exist) or fix the error above.`, { cause: error });
  }
  if (!Array.isArray(module.tools)) {
    throw new ToolPackageError(`Tool package "${specifier}" exports no \`tools\` array. Fix: add \`export const tools = [YourTool] as const satisfies ToolList;\` to its entry (${entry}).`);
  }
  if (module.createDependencies !== undefined && typeof module.createDependencies !== 'function') {
    throw new ToolPackageError(`Tool package "${specifier}" exports \`createDependencies\` but it is not a function. Fix: export a function returning the dependencies by name.`);
  }
  const meta = readPackageMeta(entry);
  return {
    specifier,
    name: meta?.name ?? specifier,
    version: meta?.version,
    entry,
    tools: module.tools as AnyAgentToolClass[],
    createDependencies: module.createDependencies,
  };
}

function resolveEntry(specifier: string, baseDir: string): string {
  const isPath = specifier.startsWith('.') || isAbsolute(specifier) || specifier.startsWith('file:');
  if (isPath) {
    const path = specifier.startsWith('file:') ? new URL(specifier).pathname : resolve(baseDir, specifier);
    try {
      // A folder resolves through its package.json (exports, then main), like an installed package.
      return createRequire(join(baseDir, 'noop.js')).resolve(path);
    } catch (error) {
      throw new ToolPackageError(`Tool package "${specifier}" was not found at ${path}: ${(error as Error).message.split('\n')[0]}. Fix: point toolPackages at a built package folder or its entry file.`, { cause: error });
    }
  }
  for (const from of [createRequire(join(baseDir, 'noop.js')), hostRequire]) {
    try {
      return from.resolve(specifier);
    } catch {
      // try the next place
    }
  }
  throw new ToolPackageError(`Tool package "${specifier}" is not installed (looked from ${baseDir} and from the host). Fix: \`npm install ${specifier}\`, or correct its name in toolPackages.`);
}

function readPackageMeta(entry: string): { name?: string; version?: string } | undefined {
  for (let dir = dirname(entry); ; dir = dirname(dir)) {
    try {
      const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (meta.name) return meta;
    } catch {
      // keep walking up
    }
    if (dirname(dir) === dir) return undefined;
  }
}
