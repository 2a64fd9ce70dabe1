import type { AdminLogger, AgentTool, AnyAgentToolClass, ToolPackage } from '@aptix/tool-contract';

/** A tool package with its settings, as the host's `toolPackages` entry `{ "package": "…", "options": { … } }` gives them. */
export interface ConfiguredToolPackage {
  readonly package: ToolPackage;
  readonly options: Readonly<Record<string, unknown>>;
}

/**
 * What an adapter takes tools from: tool classes, tool package modules (`import * as samples from
 * '@aptix/tool-samples'`), or a package with its options (`{ package: bridge, options: { … } }`).
 */
export type ToolSource = AnyAgentToolClass | ToolPackage | ConfiguredToolPackage;

/** A package the adapter prepares: its `createDependencies` and `createTools` get `{ logger, options }`. */
export interface PreparedPackage {
  readonly label: string;
  readonly toolPackage: ToolPackage;
  readonly options: Readonly<Record<string, unknown>>;
}

/** A problem with the tools or dependencies an adapter was given; the message names the tool or package and the fix. */
export class AdapterSetupError extends Error {
  override readonly name = 'AdapterSetupError';
}

/** The dependency names the adapter itself provides, which a package's `createDependencies` may not reuse. */
export const PROVIDED_DEPENDENCIES = Object.freeze(['logger', 'sessionManager', 'modeCatalog'] as const);

function isToolPackage(source: unknown): source is ToolPackage {
  return source !== null && typeof source === 'object' && Array.isArray((source as ToolPackage).tools);
}

function isConfigured(source: unknown): source is ConfiguredToolPackage {
  return source !== null && typeof source === 'object' && isToolPackage((source as ConfiguredToolPackage).package);
}

/** Every static tool class of the sources, in order, and every package (its hooks run once the classes are checked). */
export function flattenSources(sources: readonly ToolSource[]): {
  classes: AnyAgentToolClass[];
  packages: PreparedPackage[];
} {
  if (!Array.isArray(sources))
    throw new AdapterSetupError(
      '`tools` must be an array of tool classes or tool packages, e.g. [HelloWorldTool] or [samples] from `import * as samples from "@aptix/tool-samples"`.',
    );
  const classes: AnyAgentToolClass[] = [];
  const packages: PreparedPackage[] = [];
  sources.forEach((source, index) => {
    if (typeof source === 'function') {
      classes.push(source);
      return;
    }
    const [toolPackage, options] = isConfigured(source)
      ? // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
        [source.package, source.options ?? {}]
      : isToolPackage(source)
        ? [source, {}]
        : [undefined, {}];
    if (toolPackage === undefined) {
      throw new AdapterSetupError(
        `tools[${index}] is neither a tool class nor a tool package (an object with a \`tools\` array). Fix: pass the class itself, the package's module namespace, or { package, options }.`,
      );
    }
    const label = `tool package #${index} (${toolPackage.tools.map((tool) => tool.ToolName).join(', ') || 'tools made at start-up'})`;
    for (const hook of ['createDependencies', 'createTools', 'createUnits'] as const) {
      if (toolPackage[hook] !== undefined && typeof toolPackage[hook] !== 'function') {
        throw new AdapterSetupError(
          `${label} exports \`${hook}\` but it is not a function. Fix: export a function, or nothing.`,
        );
      }
    }
    classes.push(...toolPackage.tools);
    packages.push({ label, toolPackage, options });
  });
  return { classes, packages };
}

/**
 * Runs each package's `createDependencies` and then its `createTools`, as the host's start-up does.
 * The dependencies every tool is built with, by constructor-parameter name: the adapter's own, then
 * what each package returns, then the caller's (which win, so a test can swap one). Clashes between
 * packages, or with the adapter's own names, fail as the host's start-up does.
 */
export async function preparePackages(
  packages: readonly PreparedPackage[],
  provided: Record<string, unknown>,
  caller: Readonly<Record<string, unknown>>,
  logger: AdminLogger,
): Promise<{
  dependencies: Record<string, unknown>;
  madeTools: AnyAgentToolClass[];
  prompts: unknown[];
  resources: unknown[];
}> {
  const dependencies: Record<string, unknown> = { ...provided };
  const providedBy = new Map<string, string>();
  const madeTools: AnyAgentToolClass[] = [];
  const units = { prompts: [] as unknown[], resources: [] as unknown[] };
  for (const { label, toolPackage, options } of packages) {
    const host = { logger, options };
    const made = (await toolPackage.createDependencies?.(host)) ?? {};
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (made === null || typeof made !== 'object' || Array.isArray(made))
      throw new AdapterSetupError(
        `${label}: createDependencies() must return a plain object of dependencies by constructor-parameter name.`,
      );
    for (const [name, value] of Object.entries(made)) {
      if ((PROVIDED_DEPENDENCIES as readonly string[]).includes(name)) {
        throw new AdapterSetupError(
          `${label} provides a dependency named "${name}", which the adapter itself provides. Fix: rename it in its createDependencies.`,
        );
      }
      const other = providedBy.get(name);
      if (other !== undefined)
        throw new AdapterSetupError(
          `${other} and ${label} both provide a dependency named "${name}". Fix: give one of them another name.`,
        );
      providedBy.set(name, label);
      dependencies[name] = value;
    }
    const tools = (await toolPackage.createTools?.(host)) ?? [];
    if (!Array.isArray(tools))
      throw new AdapterSetupError(`${label}: createTools() must return an array of tool classes.`);
    madeTools.push(...tools);
    await collectUnits(label, toolPackage, host, units);
  }
  return { dependencies: Object.assign(dependencies, caller), madeTools, ...units };
}

/** A package's prompts and resources: its `prompts` and `resources` exports, then what its `createUnits` makes (checked later by the registries). */
async function collectUnits(
  label: string,
  toolPackage: ToolPackage,
  host: { logger: AdminLogger; options: Readonly<Record<string, unknown>> },
  into: { prompts: unknown[]; resources: unknown[] },
): Promise<void> {
  const made = (await toolPackage.createUnits?.(host)) ?? {};
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers and tool packages can bring what the type rules out
  if (made === null || typeof made !== 'object' || Array.isArray(made))
    throw new AdapterSetupError(`${label}: createUnits() must return { prompts?: [...], resources?: [...] }.`);
  for (const kind of ['prompts', 'resources'] as const) {
    for (const list of [toolPackage[kind], made[kind]]) {
      if (list === undefined) continue;
      if (!Array.isArray(list))
        throw new AdapterSetupError(
          `${label}: its ${kind} (an export, or what createUnits() returned) must be an array, e.g. [MyPrompt].`,
        );
      into[kind].push(...(list as unknown[]));
    }
  }
}

/**
 * Builds each tool once, and checks what the host's start-up checks: the constructor does not throw,
 * and the instance reports its class's name and has an `execute` method.
 */
export function buildTools(
  classes: readonly AnyAgentToolClass[],
  dependencies: Readonly<Record<string, unknown>>,
): Map<AnyAgentToolClass, AgentTool> {
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
    if (
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      tool === null ||
      typeof tool !== 'object' ||
      tool.name !== toolClass.ToolName ||
      typeof tool.execute !== 'function'
    ) {
      throw new AdapterSetupError(
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- kept for callers in plain JavaScript and tool packages, which can pass what the type rules out
        `Tool "${toolClass.ToolName}" breaks the contract: its instances report the name "${String(tool?.name)}" (it must equal ToolName) or have no execute method.`,
      );
    }
    built.set(toolClass, tool);
  }
  return built;
}
