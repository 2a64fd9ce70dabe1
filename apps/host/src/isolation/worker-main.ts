/**
 * The entry of an isolated package's worker thread: imports the package, sets it up, checks its tools
 * against the contract, reports their static side to the host, then runs the calls the host sends,
 * through an executor of its own (so arguments, results and exceptions are handled as in process).
 * Nothing here is trusted by the host: it checks every result again.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  AgentToolExecutor,
  AgentToolRegistry,
  describeThrown,
  evaluateApprovalPolicy,
  ToolContractError,
  type AdminLogger,
  type AgentTool,
  type AnyAgentToolClass,
  type LogLevel,
  type LogPairs,
  type ToolList,
  type ToolPackageHost,
} from '@aptix/tool-contract';
import { guardExits } from '../exit-guard.js';
import { closeModule, importToolPackage, readPackageMeta, resolveEntry, setUpToolPackage } from '../tool-packages.js';
import type { HostMessage, IsolatedToolMeta, WorkerMessage, WorkerSetup } from './protocol.js';
import { Outbox } from './outbox.js';
import { WorkerCalls, type UnfitCalls } from './worker-calls.js';
import { WorkerUnits } from './worker-units.js';
import { IDLE_CHECK_MS, isolateMemory, WorkerHealth, type Unfit } from './worker-health.js';

const port = parentPort!;
const setup = workerData as WorkerSetup;
/** Calls' messages answered in one turn of the event loop go to the host as one (see outbox.ts). */
// Bound now, before the package loads: a package that replaces postMessage (on the port or its
// prototype) cannot silence or reroute the worker's answers.
const post = port.postMessage.bind(port);
const outbox = new Outbox((message) => post(message));
const send = (message: WorkerMessage) => outbox.object(message);

/** The tools' AdminLogger: every entry goes to the host's logger, tagged with the package. */
const logger: AdminLogger = {
  addError: (tag, message, pairs) => log('error', tag, message, pairs),
  addException: (tag, error, pairs) => log('error', tag, describeThrown(error), pairs),
  addCustomEvent: (level, tag, message, pairs) => log(level, tag, message, pairs),
};

function log(level: LogLevel, tag: string, message: unknown, pairs: LogPairs | undefined): void {
  try {
    send({
      type: 'log',
      level,
      tag: String(tag),
      message: String(message),
      pairs: (pairs ?? []).map(([key, value]) => [String(key), String(value)] as const),
    });
  } catch {
    // A log entry that cannot be sent is dropped, never a reason to fail a call.
  }
}

/**
 * Before the package loads: its `process.exit` would only end this thread, but its `process.kill` of the
 * host's pid would end the host, so both are refused here as in the host process (see exit-guard.ts).
 */
let packageName = setup.specifier;
try {
  packageName = readPackageMeta(resolveEntry(setup.specifier, setup.baseDir))?.name ?? packageName;
} catch {
  // The import below fails with the message that says why.
}
guardExits(({ call }) =>
  logger.addError(
    '[IsolatedPackage_ExitRefused]',
    `refused ${call} from package "${packageName}" in its isolated worker: only the host ends ` +
      `its process or its workers. The code that called it got a PROCESS_EXIT_REFUSED error (a ` +
      `tool call fails with that code); fix the package to return or throw an error instead.`,
    [
      ['event', 'exitRefused'],
      ['call', call],
    ],
  ),
);

/** Made before the package loads, with what it uses (see worker-health.ts). */
const health = new WorkerHealth(setup.maxExternalBytes, isolateMemory(setup.collectorLock));
const every = setInterval;
const reportUnfit = (unfit: Unfit, calls: UnfitCalls) =>
  send({ type: 'unfit', reason: unfit.reason, detail: unfit.detail, ...calls });

/** The dependencies tools are built from: the logger and the package's own, strict like the host's container. */
function cradleOf(dependencies: Readonly<Record<string, unknown>>): object {
  const values: Record<string, unknown> = { ...dependencies, logger };
  return new Proxy(values, {
    get(target, key) {
      if (typeof key === 'string' && Object.hasOwn(target, key)) return target[key];
      if (typeof key === 'symbol' || key === 'then') return undefined;
      throw new Error(
        `Could not resolve '${key}': an isolated package's tools receive only the logger and what its own createDependencies provides.`,
      );
    },
  });
}

async function start(): Promise<void> {
  send({ type: 'phase', phase: 'import' });
  const imported = await importToolPackage(setup.specifier, setup.baseDir, setup.limitMs);
  packageName = imported.name;
  send({ type: 'phase', phase: 'setup' });
  const who = { specifier: setup.specifier, name: imported.name, entry: imported.entry };
  let changing = false;
  let follow: ((tools: ToolList) => void) | undefined;
  const host: ToolPackageHost = { logger, options: setup.options };
  // A getter, so that only a package that takes it counts as one whose tools may change.
  Object.defineProperty(host, 'toolsChanged', {
    enumerable: true,
    get: () => {
      changing = true;
      return (tools: ToolList) => follow?.(tools);
    },
  });
  const { tools, dependencies, prompts, resources } = await setUpToolPackage(imported.module, who, host, setup.limitMs);
  // Checked here as the host checks an in-process package's; the host registers proxies and checks them again.
  const units = new WorkerUnits(imported.name, prompts, resources, send, logger);
  const cradle = cradleOf(dependencies);
  const registry = new AgentToolRegistry({ logger });
  /** Registers a class and reads its static side for the host; throws a message naming what is wrong. */
  const admit = (toolClass: AnyAgentToolClass): IsolatedToolMeta => {
    let registered;
    try {
      registered = registry.registerTool(toolClass);
    } catch (error) {
      throw new Error(
        error instanceof ToolContractError
          ? `Tool package "${imported.name}" has a tool that breaks the contract (${error.code}): ${error.message}`
          : `Tool package "${imported.name}" has a tool the host cannot read: inspecting it threw ${describeThrown(error)}.`,
      );
    }
    let instance: AgentTool;
    try {
      instance = new toolClass(cradle) as AgentTool;
    } catch (error) {
      registry.unregister(registered.name);
      throw new Error(
        `Tool "${registered.name}" from "${imported.name}" cannot be created in its worker: its constructor threw ${describeThrown(error)}.`,
      );
    }
    return {
      name: registered.name,
      className: toolClass.name,
      usage: registered.usageMetadata,
      schema: JSON.parse(JSON.stringify(toolClass.getSchema())) as IsolatedToolMeta['schema'],
      timeoutMs: registered.timeoutMs,
      annotations:
        registered.annotations === undefined ? undefined : JSON.parse(JSON.stringify(registered.annotations)),
      fullyExecutedOnServer: instance.isToolFullyExecutedOnServer !== false,
      approval: registered.approval,
      ...(registered.outputSchema === undefined ? {} : { outputSchema: registered.outputSchema }),
      ...(toolClass.Modes === undefined
        ? {}
        : { modes: JSON.parse(JSON.stringify(toolClass.Modes)) as readonly string[] }),
      ...(registered.taskSupport === 'forbidden' ? {} : { taskSupport: registered.taskSupport }),
      ...(registered.taskInput === 'before' ? { taskInput: 'before' as const } : {}),
    };
  };
  const metas = new Map<string, { toolClass: AnyAgentToolClass; meta: IsolatedToolMeta }>();
  for (const toolClass of tools) {
    const meta = admit(toolClass as AnyAgentToolClass);
    metas.set(meta.name, { toolClass: toolClass as AnyAgentToolClass, meta });
  }
  // Later lists: this worker's registry follows them (a class that fails is logged and left out, as
  // in the host), and the host is sent the whole list to check and offer again.
  follow = (next) => {
    let list: AnyAgentToolClass[];
    try {
      list = [...(next as readonly AnyAgentToolClass[])];
    } catch (error) {
      logger.addError(
        '[IsolatedPackage_ToolsChanged__Unreadable]',
        `Tool package "${imported.name}" reported a tool list that cannot be read: ${describeThrown(error)}.`,
      );
      return;
    }
    const keep = new Set(list);
    for (const [name, { toolClass }] of [...metas]) {
      if (keep.has(toolClass)) continue;
      if (registry.get(name)?.toolClass === toolClass) registry.unregister(name);
      metas.delete(name);
    }
    for (const toolClass of list) {
      if ([...metas.values()].some((entry) => entry.toolClass === toolClass)) continue;
      try {
        const meta = admit(toolClass);
        metas.set(meta.name, { toolClass, meta });
      } catch (error) {
        logger.addError(
          '[IsolatedPackage_ToolsChanged__ToolRefused]',
          error instanceof Error ? error.message : describeThrown(error),
        );
      }
    }
    send({ type: 'tools', tools: [...metas.values()].map((entry) => entry.meta) });
  };
  const executor = new AgentToolExecutor({
    registry,
    logger,
    createTool: (toolClass) => new toolClass(cradle),
    // The host keeps the time-outs and sends a cancellation; the worker's own deadline is only a backstop.
    defaultTimeoutMs: 2_147_483_647,
    maxResultBytes: setup.maxResultBytes,
    maxErrorMessageLength: setup.maxErrorMessageLength,
  });

  // What the package changed while loading is its own environment, kept by every worker alike; but not
  // the built-ins the call path cannot work without (their loss would make every call fail).
  const changed = health.beforeCall();
  if (changed !== undefined) {
    throw new Error(
      `Tool package "${imported.name}" changed JavaScript's built-ins while loading ` +
        `(${changed.detail}); an isolated worker's calls rely on them. Fix: leave the built-ins ` +
        `alone, or load the package with isolation "none".`,
    );
  }
  health.baseline();
  const calls = new WorkerCalls(executor, (wire) => outbox.string(wire), send, health, reportUnfit);
  // Between calls too: what a package's timer changes, or holds, is found within a second.
  every(() => {
    health.idle((unfit) => {
      if (unfit !== undefined) reportUnfit(unfit, { running: calls.running() });
    });
  }, IDLE_CHECK_MS).unref();
  port.on('message', (message: string | string[] | HostMessage) => {
    // A call is a string (see protocol.ts), several in an array when the host sent them together;
    // everything else is rare and an object.
    if (typeof message === 'string') return calls.run(message);
    if (Array.isArray(message)) return calls.runBatch(message);
    switch (message.type) {
      case 'ping':
        send({ type: 'pong', seq: message.seq });
        return;
      case 'close':
        // The host is stopping: the package's own close export ends what it started, then the host ends the thread.
        void closeModule(imported.module, imported.name, setup.limitMs).then(() => send({ type: 'closed' }));
        return;
      case 'cancel':
        calls.cancel(message.id, message.timedOut);
        return;
      case 'unit':
      case 'unit-cancel':
      case 'unit-watch':
      case 'unit-unwatch':
        units.handle(message);
        return;
      case 'policy': {
        // Fails closed on anything it cannot read or that throws (evaluateApprovalPolicy's rules).
        let answer: { required: boolean; reason: string };
        try {
          answer = evaluateApprovalPolicy(
            message.name,
            registry.get(message.name)?.approvalPolicy,
            JSON.parse(message.args),
            JSON.parse(message.context),
          );
        } catch {
          answer = {
            required: true,
            reason: `${message.name}'s approval policy could not be evaluated, so a person must decide.`,
          };
        }
        send({ type: 'policy', id: message.id, required: answer.required, reason: answer.reason });
        return;
      }
    }
  });
  send({
    type: 'ready',
    name: imported.name,
    version: imported.version,
    folder: imported.folder,
    tools: [...metas.values()].map((entry) => entry.meta),
    changing,
    prompts: units.prompts(),
    resources: units.resources(),
  });
}

start().catch((error: unknown) => {
  send({ type: 'failed', message: error instanceof Error ? error.message : describeThrown(error) });
});
