import type { AdminLogger, AgentTool, AnyAgentToolClass, ToolPackage } from '@aptix/tool-contract';

/** What an adapter takes tools from: tool classes, or tool package modules (`import * as samples from '@aptix/tool-samples'`). */
export type ToolSource = AnyAgentToolClass | ToolPackage;

/** A problem with the tools or dependencies an adapter was given; the message names the tool or package and the fix. */
export class AdapterSetupError extends Error {
  override readonly name = 'AdapterSetupError';
}

/** The dependency names the adapter itself provides, which a package's `createDependencies` may not reuse. */
export const PROVIDED_DEPENDENCIES = Object.freeze(['logger', 'sessionManager', 'modeCatalog'] as const);

function isToolPackage(source: unknown): source is ToolPackage {
  return source !== null && typeof source === 'object' && Array.isArray((source as ToolPackage).tools);
}

function describe(source: ToolSource, index: number): string {
  return typeof source === 'function' ? `tool class ${source.name || `#${index}`}` : `tool package #${index}`;
}

/** Every tool class of the sources, in order, and the packages that bring their own dependencies. */
export function flattenSources(sources: readonly ToolSource[]): { classes: AnyAgentToolClass[]; packages: Array<{ label: string; toolPackage: ToolPackage }> } {
  if (!Array.isArray(sources)) throw new AdapterSetupError('`tools` must be an array of tool classes or tool packages, e.g. [HelloWorldTool] or [samples] from `import * as samples from "@aptix/tool-samples"`.');
  const classes: AnyAgentToolClass[] = [];
  const packages: Array<{ label: string; toolPackage: ToolPackage }> = [];
  sources.forEach((source, index) => {
    if (typeof source === 'function') classes.push(source);
    else if (isToolPackage(source)) {
      classes.push(...source.tools);
      if (source.createDependencies !== undefined) {
        if (typeof source.createDependencies !== 'function') {
          throw new AdapterSetupError(`${describe(source, index)} exports \`createDependencies\` but it is not a function. Fix: export a function returning the dependencies by name.`);
        }
        packages.push({ label: `${describe(source, index)} (${source.tools.map((tool) => tool.ToolName).join(', ')})`, toolPackage: source });
      }
    } else {
      throw new AdapterSetupError(`tools[${index}] is neither a tool class nor a tool package (an object with a \`tools\` array). Fix: pass the class itself, or the package's module namespace.`);
    }
  });
  return { classes, packages };
}

/**
 * The dependencies every tool is built with, by constructor-parameter name: the adapter's own, then
 * what each package's `createDependencies` returns, then the caller's (which win, so a test can swap one).
 * Clashes between packages, or with the adapter's own names, fail as the host's start-up does.
 */
export async function gatherDependencies(
  packages: ReadonlyArray<{ label: string; toolPackage: ToolPackage }>,
  provided: Record<string, unknown>,
  caller: Readonly<Record<string, unknown>>,
  logger: AdminLogger,
): Promise<Record<string, unknown>> {
  const dependencies: Record<string, unknown> = { ...provided };
  const providedBy = new Map<string, string>();
  for (const { label, toolPackage } of packages) {
    const made = (await toolPackage.createDependencies!({ logger, options: {} })) ?? {};
    for (const [name, value] of Object.entries(made)) {
      if ((PROVIDED_DEPENDENCIES as readonly string[]).includes(name)) {
        throw new AdapterSetupError(`${label} provides a dependency named "${name}", which the adapter itself provides. Fix: rename it in its createDependencies.`);
      }
      const other = providedBy.get(name);
      if (other !== undefined) throw new AdapterSetupError(`${other} and ${label} both provide a dependency named "${name}". Fix: give one of them another name.`);
      providedBy.set(name, label);
      dependencies[name] = value;
    }
  }
  return Object.assign(dependencies, caller);
}

/**
 * Builds each tool once, and checks what the host's start-up checks: the constructor does not throw,
 * and the instance reports its class's name and has an `execute` method.
 */
export function buildTools(classes: readonly AnyAgentToolClass[], dependencies: Readonly<Record<string, unknown>>): Map<AnyAgentToolClass, AgentTool> {
  const built = new Map<AnyAgentToolClass, AgentTool>();
  for (const toolClass of classes) {
    let tool: AgentTool;
    try {
      tool = new toolClass(dependencies);
    } catch (error) {
      throw new AdapterSetupError(
        `Tool "${toolClass.ToolName}" cannot be created: its constructor threw: ${(error as Error).message} ` +
          'Fix: pass what it needs in `dependencies`, or `session` for the mode tools (it brings sessionManager and modeCatalog).',
        { cause: error },
      );
    }
    if (tool === null || typeof tool !== 'object' || tool.name !== toolClass.ToolName || typeof tool.execute !== 'function') {
      throw new AdapterSetupError(`Tool "${toolClass.ToolName}" breaks the contract: its instances report the name "${String(tool?.name)}" (it must equal ToolName) or have no execute method.`);
    }
    built.set(toolClass, tool);
  }
  return built;
}
