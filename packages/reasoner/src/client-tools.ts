import { silentAdminLogger, type ToolFactory } from '@aptix/tool-contract';
import type { ModePrompt, ReasonerToolRegistry } from './instructions.js';
import { ReasonerError, ReasonerErrorCode } from './reasoner-error.js';

/** The registry's change counter, when it keeps one (the Reasoner rebuilds its prompts when it moves). */
export function revisionOf(registry: ReasonerToolRegistry): number | undefined {
  const revision = (registry as { revision?: unknown }).revision;
  return typeof revision === 'number' ? revision : undefined;
}

/** Builds each offered tool once to read `isToolFullyExecutedOnServer`: the tools a client completes. */
export function findClientExecutedTools(
  registry: ReasonerToolRegistry,
  prompts: ReadonlyMap<string, ModePrompt>,
  createTool: ToolFactory,
): ReadonlySet<string> {
  const names = new Set([...prompts.values()].flatMap((prompt) => prompt.toolNames));
  const clientTools = new Set<string>();
  for (const name of names) {
    const toolClass = registry.get(name)!.toolClass;
    let flag: unknown;
    try {
      flag = createTool(toolClass, {}, silentAdminLogger).isToolFullyExecutedOnServer;
    } catch (error) {
      throw new ReasonerError(
        ReasonerErrorCode.TOOL_UNAVAILABLE,
        `Tool "${name}" cannot be built (${(error as Error).message}), so the Reasoner cannot tell whether the server or the client completes it. ` +
          'Fix: pass createTool, the same factory the executor builds tools with (e.g. (toolClass) => container.build(toolClass)).',
        { cause: error },
      );
    }
    if (flag === false) clientTools.add(name);
  }
  return clientTools;
}
