import { AwilixResolutionError, type AwilixContainer } from 'awilix';
import {
  describeThrown,
  type AdminLogger,
  type AgentTool,
  type AnyAgentToolClass,
  type ToolFactory,
} from '@aptix/tool-contract';
import type { HostCradle } from './container.js';
import { HostStartupError } from './host-startup-error.js';
import type { LoadedToolPackage } from './tool-packages.js';

/**
 * Builds a tool per call from the container. The constructor receives a cradle whose `logger` is the
 * call's (an HTTP request's, carrying the request id, or the host's) and whose every other name
 * resolves from the container as usual. Not `container.build`: that tokenises the class's source on
 * every call (about 50 µs for a small tool), and even from a resolver made once, reading `logger`
 * through the container's proxy costs a resolution per call (about 700 instructions, half a small call).
 */
export function toolFactory(container: AwilixContainer<HostCradle>): ToolFactory {
  // PROXY injection: the constructor receives the cradle. A call's cradle holds its `logger` as its one
  // own field; every other read falls through to the container's cradle, its prototype. Cheaper than
  // Object.create with a property descriptor per call. A class field, because it is defined on the
  // object: a plain assignment would reach the cradle's proxy, which refuses writes.
  class CallCradle {
    logger: AdminLogger;
    constructor(logger: AdminLogger) {
      this.logger = logger;
    }
  }
  Object.setPrototypeOf(CallCradle.prototype, container.cradle as object);
  return (toolClass, _context, logger) =>
    new (toolClass as unknown as new (cradle: CallCradle) => AgentTool)(new CallCradle(logger));
}

/**
 * TUL-011 §2's startup test (`ConfigureServices_WithValidTools_DoesNotThrow`): builds one instance of
 * every registered tool from the real container, so a missing dependency fails at start-up and not on
 * the first call.
 */
export function checkToolsResolve(
  container: AwilixContainer<HostCradle>,
  toolPackages: readonly LoadedToolPackage[],
): void {
  for (const toolPackage of toolPackages) {
    for (const toolClass of toolPackage.tools as readonly AnyAgentToolClass[]) {
      let tool: AgentTool;
      try {
        tool = container.build(toolClass as never) as AgentTool;
      } catch (error) {
        // What a constructor throws may be anything (a Proxy whose traps throw): read it only through guards.
        let missing: string | undefined;
        try {
          missing = error instanceof AwilixResolutionError ? /resolve '([^']+)'/.exec(error.message)?.[1] : undefined;
        } catch {
          missing = undefined;
        }
        const why = missing
          ? `it needs "${missing}", which nothing provides. Fix: add the package that provides it, or provide it from ${toolPackage.name}'s createDependencies`
          : `its constructor threw ${describeThrown(error)}`;
        throw new HostStartupError(
          `Tool "${toolClass.ToolName}" from "${toolPackage.name}" cannot be created: ${why}.`,
          { cause: error },
        );
      }
      if (tool.name !== toolClass.ToolName || typeof tool.execute !== 'function') {
        throw new HostStartupError(
          `Tool "${toolClass.ToolName}" from "${toolPackage.name}" breaks the contract: its instances report the name "${String(tool.name)}" (it must equal ToolName) or have no execute method.`,
        );
      }
    }
  }
}
