import {
  AgentToolExecutor,
  AgentToolRegistry,
  PromptRegistry,
  ResourceRegistry,
  silentAdminLogger,
  TOOL_GUIDANCE_TAG,
} from '@aptix/tool-contract';
import { checkCatalogAgainstRegistry } from '@aptix/tool-mode-catalog';
import { AptixTools } from './aptix-tools.js';
import type { AptixToolsOptions } from './aptix-tools-options.js';
import { AptixUnits } from './aptix-units.js';
import { Deferral } from './deferred-tools.js';
import { AdapterSetupError, buildTools, flattenSources, preparePackages } from './tool-sources.js';

/**
 * Checks every tool against the contract (a violation throws the registry's `ToolContractError`, with
 * the message the host gives), runs each package's `createDependencies` and `createTools`, builds each
 * tool once with those dependencies and the caller's, and, with a session, checks that every tool the
 * catalog names is there.
 *
 * @throws {ToolContractError} a tool, prompt or resource breaks the contract.
 * @throws {AdapterSetupError} a tool cannot be built, or dependencies clash.
 * @throws {ModeCatalogError} `UNREGISTERED_TOOL`: a mode offers a tool that was not given.
 * @example
 * import * as samples from '@aptix/tool-samples';
 * import * as modeCatalog from '@aptix/tool-mode-catalog';
 * import * as modeChange from '@aptix/tool-mode-change';
 * const aptix = await createAptixTools({ tools: [samples, modeCatalog, modeChange], session: { sessionManager: store, sessionId, modeCatalog: catalog } });
 */
export async function createAptixTools(options: AptixToolsOptions): Promise<AptixTools> {
  const logger = options.logger ?? silentAdminLogger;
  const { classes, packages } = flattenSources(options.tools);
  // The contract check first: a broken static tool stops here, before any package code runs.
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools(classes);
  const { session } = options;
  const provided: Record<string, unknown> =
    session === undefined
      ? { logger }
      : { logger, sessionManager: session.sessionManager, modeCatalog: session.modeCatalog };
  const { dependencies, madeTools, prompts, resources } = await preparePackages(
    packages,
    provided,
    options.dependencies ?? {},
    logger,
  );
  registry.registerTools(madeTools);
  // Prompts and resources: the packages' then the caller's, each checked as the host checks them (a ToolContractError names the rule).
  const promptRegistry = new PromptRegistry({ logger });
  promptRegistry.registerAll([...prompts, ...(options.prompts ?? [])]);
  const resourceRegistry = new ResourceRegistry({ logger });
  resourceRegistry.registerAll([...resources, ...(options.resources ?? [])]);
  for (const tool of registry.list()) {
    if (tool.usageMetadata.includes(`</${TOOL_GUIDANCE_TAG}>`)) {
      throw new AdapterSetupError(
        `The ToolUsageMetadata of "${tool.name}" contains "</${TOOL_GUIDANCE_TAG}>", which would end its section of the tool guidance early. Fix: reword it.`,
      );
    }
  }
  if (session !== undefined) checkCatalogAgainstRegistry(registry, session.modeCatalog);
  const deferral = Deferral.of(options.deferred, session?.modeCatalog);
  const built = buildTools(
    registry.names().map((name) => registry.get(name)!.toolClass),
    dependencies,
  );
  const executor = new AgentToolExecutor({
    registry,
    logger,
    createTool: (toolClass) => built.get(toolClass)!,
    ...(options.defaultTimeoutMs === undefined ? {} : { defaultTimeoutMs: options.defaultTimeoutMs }),
  });
  const units = new AptixUnits(promptRegistry, resourceRegistry, session, {
    ...(options.unitTimeoutMs === undefined ? {} : { timeoutMs: options.unitTimeoutMs }),
  });
  return new AptixTools(registry, executor, session, options.conversationId, deferral, units);
}
