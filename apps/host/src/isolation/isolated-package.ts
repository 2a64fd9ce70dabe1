import type { Logger } from 'pino';
import type { AgentTool, AgentToolExecutionContext, AnyAgentToolClass, InvokeResult } from '@aptix/tool-contract';
import type { ToolPackageConfig } from '../tool-package-config.js';
import { DEFAULT_WORKER_EXTERNAL_MB, DEFAULT_WORKER_HEAP_MB } from '../tool-package-config.js';
import { resolveEntry, ToolPackageError, type LoadedToolPackage } from '../tool-packages.js';
import type { ToolPackageFollower } from '../live-tools.js';
import type { IsolatedToolMeta } from './protocol.js';
import { WorkerPool } from './worker-pool.js';
import { isolatedDynamicPolicy } from './worker-policy.js';
import { isolatedUnits } from './isolated-units.js';

export interface IsolatedLoadOptions {
  readonly limitMs: number;
  readonly logger: Logger;
  readonly maxResultBytes: number;
  readonly maxErrorMessageLength: number;
}

/**
 * Loads a package with `isolation: "worker"`: its workers import it, set it up and check its tools;
 * the host registers a proxy class per tool, built from the static side the first worker reported,
 * so the registry's contract check runs on it like on any other tool, and every surface (HTTP, MCP,
 * the CLI, the agent loop) sees the same tool. A call runs in a worker; its time-out and cancellation
 * cross to it. Its prompts and resources are proxies the same way (see isolated-units.ts).
 */
export async function loadIsolated(
  config: ToolPackageConfig,
  baseDir: string,
  options: IsolatedLoadOptions,
  follower?: ToolPackageFollower,
): Promise<LoadedToolPackage> {
  // Resolved here first, so a package that is not installed fails with the same message as in process.
  const entry = resolveEntry(config.specifier, baseDir);
  // The thread's own limits go to Node; the one outside the heap is the worker's to check (worker-health.ts).
  const { maxExternalMemoryMb = DEFAULT_WORKER_EXTERNAL_MB, ...threadLimits } = config.resourceLimits;
  let started: Awaited<ReturnType<typeof WorkerPool.start>>;
  try {
    started = await WorkerPool.start({
      specifier: config.specifier,
      size: config.workers,
      resourceLimits: { maxOldGenerationSizeMb: DEFAULT_WORKER_HEAP_MB, stackSizeMb: 4, ...threadLimits },
      externalMemoryMb: maxExternalMemoryMb,
      logger: options.logger,
      setup: {
        specifier: config.specifier,
        baseDir,
        options: config.options,
        limitMs: options.limitMs,
        maxResultBytes: options.maxResultBytes,
        maxErrorMessageLength: options.maxErrorMessageLength,
        maxExternalBytes: maxExternalMemoryMb * 1024 * 1024,
      },
    });
  } catch (error) {
    throw new ToolPackageError((error as Error).message, { cause: error });
  }
  const { pool, ready } = started;
  // One proxy class per distinct static side: the same report (from each worker, or again) gives the
  // same classes, so the host sees a change only when there is one.
  const proxies = new Map<string, AnyAgentToolClass>();
  const proxyOf = (meta: IsolatedToolMeta) => {
    const key = JSON.stringify(meta);
    let toolClass = proxies.get(key);
    if (toolClass === undefined) proxies.set(key, (toolClass = proxyClass(meta, pool)));
    return toolClass;
  };
  const loaded: LoadedToolPackage = {
    specifier: config.specifier,
    name: ready.name,
    version: ready.version,
    entry,
    folder: ready.folder,
    tools: ready.tools.map(proxyOf),
    // Proxies whose render, read and completions run in a worker; the host checks them as any package's.
    ...isolatedUnits(ready, pool),
    dependencies: {},
    isolation: 'worker',
    close: () => pool.close(),
  };
  if (follower !== undefined && ready.changing === true) {
    follower.watched();
    // Each worker runs the package, so each reports its changes (and a fresh worker its start-up list).
    pool.on('tools', (tools: readonly IsolatedToolMeta[]) => follower.toolsChanged(tools.map(proxyOf)));
  }
  return loaded;
}

/** A host-side class for a tool that runs in the pool: the static side as reported, `execute` through the pool. */
function proxyClass(meta: IsolatedToolMeta, pool: WorkerPool): AnyAgentToolClass {
  const schemaText = JSON.stringify(meta.schema);
  const IsolatedTool = class implements AgentTool {
    readonly name = meta.name;
    readonly isToolFullyExecutedOnServer = meta.fullyExecutedOnServer;
    // The three parameters tell the executor to make the call's signal: it carries the time-out to the worker.
    execute(
      argumentsJson: string,
      context: AgentToolExecutionContext,
      signal?: AbortSignal,
    ): Promise<InvokeResult<string>> {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      return pool.call(meta.name, argumentsJson, context ?? {}, signal);
    }
  };
  const statics: PropertyDescriptorMap = {
    name: { value: meta.className || 'IsolatedTool' },
    ToolName: { value: meta.name, enumerable: true },
    ToolUsageMetadata: { value: meta.usage, enumerable: true },
    getSchema: { value: () => JSON.parse(schemaText) as unknown },
    // The pool lets go of the call's signal when the call settles (its abort listener is removed, nothing
    // keeps it), so the executor may hand the next call the same one instead of making one per call.
    ReleasesSignal: { value: true, enumerable: true },
  };
  if (meta.timeoutMs !== undefined) statics.TimeoutMs = { value: meta.timeoutMs, enumerable: true };
  if (meta.annotations !== undefined) statics.ToolAnnotations = { value: meta.annotations, enumerable: true };
  // The approval policy, failing closed: anything but "never" gates. One that depends on the arguments is a
  // function in the worker: the host's approval gate asks the worker (see worker-policy.ts).
  if (meta.approval !== 'never') {
    const policy =
      meta.approval === 'dynamic'
        ? isolatedDynamicPolicy(meta.name, (args, context) => pool.evaluatePolicy(meta.name, args, context))
        : 'always';
    statics.ApprovalPolicy = { value: policy, enumerable: true };
  }
  if (meta.outputSchema !== undefined) statics.OutputSchema = { value: meta.outputSchema, enumerable: true };
  if (meta.modes !== undefined) statics.Modes = { value: meta.modes, enumerable: true };
  if (meta.taskSupport !== undefined) statics.TaskSupport = { value: meta.taskSupport, enumerable: true };
  if (meta.taskInput !== undefined) statics.TaskInput = { value: meta.taskInput, enumerable: true };
  Object.defineProperties(IsolatedTool, statics);
  return IsolatedTool as unknown as AnyAgentToolClass;
}
