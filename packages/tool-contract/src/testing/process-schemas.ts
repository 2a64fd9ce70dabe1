import { spawn } from 'node:child_process';
import { dirname, isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What a separate Node process read from one tool class: its ToolName and canonical schema, or why it could not. */
export interface ProcessSchemaEntry {
  readonly toolName?: string;
  /** Canonical JSON of `getSchema()` (sorted keys), with the declared `OutputSchema` as `outputSchema`, as the registry's `canonicalSchema`. */
  readonly schema?: string;
  readonly error?: string;
}

/** The schemas a fresh Node process read from a module. */
export interface ProcessSchemas {
  /** One entry per element of the module's tool list (`tools` unless told otherwise), in order. */
  readonly tools: readonly ProcessSchemaEntry[];
  /** Every export that is a tool class (has a static `getSchema`), by export name. */
  readonly exports: Readonly<Record<string, ProcessSchemaEntry>>;
}

export interface ProcessSchemaOptions {
  /** The export holding the tool list. Default `tools`. */
  readonly exportName?: string;
  /**
   * Arguments for `node` before the script. Default: the `--conditions` of this process, plus
   * `--conditions=@aptix/source --import tsx` when the module is TypeScript.
   */
  readonly nodeArguments?: readonly string[];
  /** Default 60 s. */
  readonly timeoutMs?: number;
}

// Runs in the child: imports the module, reads every schema, writes them as JSON to file descriptor 3
// (stdout is left to the module, which may log). Kept free of imports so it needs nothing installed.
const CHILD_SCRIPT = `
import { writeSync } from 'node:fs';
const [url, exportName] = process.argv.slice(1);
const sortKeys = (v) => Array.isArray(v) ? v.map(sortKeys) : v !== null && typeof v === 'object'
  ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])])) : v;
const read = (cls) => {
  try {
    const toolName = typeof cls?.ToolName === 'string' ? cls.ToolName : undefined;
    const schema = JSON.parse(JSON.stringify(cls.getSchema()));
    // A declared output schema is part of the tool's API, as the registry's canonical schema has it.
    if (cls.OutputSchema !== undefined && schema !== null && typeof schema === 'object') schema.outputSchema = JSON.parse(JSON.stringify(cls.OutputSchema));
    return { toolName, schema: JSON.stringify(sortKeys(schema)) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
};
const mod = await import(url);
const list = mod[exportName];
const tools = Array.isArray(list) ? list.map(read) : [];
const exports = {};
for (const [name, value] of Object.entries(mod)) if (typeof value === 'function' && typeof value.getSchema === 'function') exports[name] = read(value);
writeSync(3, JSON.stringify({ tools, exports }));
process.exit(0);
`;

/**
 * Imports `modulePath` in a new Node process and reads every tool's canonical schema there. Two such
 * reads that differ, or one that differs from this process, reveal a schema built from module-load
 * values (a timestamp, a random id, the environment) that `getSchema()` called twice cannot reveal.
 *
 * @example const [a, b] = await Promise.all([schemasInFreshProcess(entry), schemasInFreshProcess(entry)]);
 */
export function schemasInFreshProcess(modulePath: string, options: ProcessSchemaOptions = {}): Promise<ProcessSchemas> {
  const file = isAbsolute(modulePath) ? modulePath : resolve(modulePath);
  const nodeArguments = options.nodeArguments ?? defaultNodeArguments(file);
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [
        ...nodeArguments,
        '--input-type=module',
        '-e',
        CHILD_SCRIPT,
        pathToFileURL(file).href,
        options.exportName ?? 'tools',
      ],
      {
        cwd: dirname(file),
        stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      },
    );
    const output: Buffer[] = [];
    let stderr = '';
    child.stdio[3]!.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 4000) stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const text = Buffer.concat(output).toString();
      if (code === 0 && text !== '') {
        try {
          resolvePromise(JSON.parse(text) as ProcessSchemas);
          return;
        } catch {
          // fall through: report the process's own words
        }
      }
      const why =
        signal === 'SIGKILL' ? `did not finish within ${timeoutMs} ms` : `exited with ${signal ?? `code ${code}`}`;
      reject(new Error(`A separate Node process importing ${file} ${why}: ${errorLine(stderr) || 'no error output'}`));
    });
  });
}

/** The `--conditions` this process runs with, and a TypeScript loader for `.ts` modules. */
export function defaultNodeArguments(modulePath: string): string[] {
  const inherited: string[] = [];
  const argv = process.execArgv;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    if (argument.startsWith('--conditions=') || argument.startsWith('-C=')) inherited.push(argument);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- an index or key that is not there reads undefined, which the type (no noUncheckedIndexedAccess) leaves out
    else if ((argument === '--conditions' || argument === '-C') && argv[index + 1] !== undefined)
      inherited.push(argument, argv[++index]!);
  }
  if (/\.[cm]?tsx?$/.test(modulePath)) {
    if (!inherited.some((argument) => argument.includes('@aptix/source'))) inherited.push('--conditions=@aptix/source');
    inherited.push('--import', 'tsx');
  }
  return inherited;
}

/** The error line of a crashed process's output (`Error [ERR_MODULE_NOT_FOUND]: Cannot find module …`), else its last line. */
function errorLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines.find((line) => /^\w*Error\b/.test(line)) ?? lines.at(-1) ?? '').trim();
}
