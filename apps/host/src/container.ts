import { asFunction, asValue, createContainer, InjectionMode, type AwilixContainer } from 'awilix';
import type { Logger } from 'pino';
import {
  AgentToolExecutor,
  AgentToolRegistry,
  createAdminLogger,
  describeThrown,
  ToolContractError,
  type AdminLogger,
} from '@aptix/tool-contract';
import type { ModeCatalog } from '@aptix/tool-mode-catalog';
import type { AgentSessionStore } from '@aptix/agent-sessions';
import { openSessionStore, type OpenSessionStoreOptions } from '@aptix/agent-sessions/open';
import { createReasoner, type Reasoner } from '@aptix/reasoner';
import { PrincipalTable } from './permissions.js';
import { tokenPrincipalPermissions } from './auth/token-principals.js';
import type { AptixConfig } from './config.js';
import { createHostLogger } from './logger.js';
import { composeHostCatalog } from './mode-wiring.js';
import { LiveTools } from './live-tools.js';
import { HostUnits } from './units/host-units.js';
import { loadToolPackages } from './load-tool-packages.js';
import { ToolPackageError, type LoadedToolPackage } from './tool-packages.js';
import { AuditTrail } from './audit/audit-trail.js';
import { auditedExecutor } from './audit/audited-calls.js';
import { HostStartupError } from './host-startup-error.js';
import { checkToolsResolve, toolFactory } from './tool-construction.js';
import { redactUrl, splitSchema } from './store-url.js';
import { HostPermissions } from './host-permissions.js';
import { permittedExecutor } from './permitted-executor.js';

/** Everything the composition root holds. Tools receive this cradle, and read only what they name. */
export interface HostCradle {
  readonly config: AptixConfig;
  /** The one pino instance, shared by the HTTP server and the services. */
  readonly pino: Logger;
  /** The AdminLogger tools receive (AGN-005 §6), over `pino`. */
  readonly logger: AdminLogger;
  readonly registry: AgentToolRegistry;
  readonly executor: AgentToolExecutor;
  readonly modeCatalog: ModeCatalog;
  readonly sessionManager: AgentSessionStore;
  readonly toolPackages: readonly LoadedToolPackage[];
  /** What start-up found questionable but not fatal: a tool offered in no mode, a tool package joining a mode this host lacks. */
  readonly warnings: readonly string[];
  /** Tools that change while the host runs (a bridged MCP server's): applies them, and says what changed. */
  readonly liveTools: LiveTools;
  /** The agent loop. Built on first use, so a host without a model still serves tools; resolving it then throws a ReasonerError saying what to set. */
  readonly reasoner: Reasoner;
  /** Who may do what: each API key's permissions (see permissions.ts). */
  readonly principals: PrincipalTable;
  /** The principals' permissions over this host's tools and packages: one for every surface and the agent loop. */
  readonly permissions: HostPermissions;
  /** The audit trail (docs/audit.md): what every surface and the agent loop record, written in batches. */
  readonly auditTrail: AuditTrail;
  /** The prompts and resources served beside the tools: the packages' and the built-in ones (see units/host-units.ts). */
  readonly unitCatalog: HostUnits;
}

export interface ComposeOptions {
  /** Use this pino instance instead of making one (tests, or a host embedding Aptix). */
  readonly pino?: Logger;
  /** Where logs go when the host makes its own logger: 1 stdout, 2 stderr. */
  readonly logDestination?: 1 | 2;
  /** Skip opening the session store (for commands that never touch sessions). */
  readonly withoutSessions?: boolean;
}

const CORE_NAMES = new Set([
  'config',
  'pino',
  'logger',
  'registry',
  'executor',
  'modeCatalog',
  'warnings',
  'sessionManager',
  'toolPackages',
  'reasoner',
  'liveTools',
  'principals',
  'permissions',
  'auditTrail',
  'unitCatalog',
]);

/**
 * The composition root: builds the strict awilix container from the configuration, loads every tool
 * package, checks every tool against the contract and the catalog, and proves each tool can be built.
 * Anything wrong stops here, with an error naming the package, the tool and the rule.
 */
export async function composeHost(
  config: AptixConfig,
  options: ComposeOptions = {},
): Promise<AwilixContainer<HostCradle>> {
  const logger = options.pino ?? createHostLogger(config.logLevel, options.logDestination ?? 2);
  const adminLogger = createAdminLogger(logger);

  const liveTools = new LiveTools();
  const toolPackages = await loadToolPackages(config, logger, adminLogger, liveTools);
  try {
    const container = await composeWith(config, options, logger, adminLogger, toolPackages, liveTools);
    container.register('liveTools', asValue(liveTools));
    // From here on, a package's changed tool list is applied (the ones reported during start-up first).
    liveTools.attach({
      registry: container.cradle.registry,
      catalog: container.cradle.modeCatalog,
      logger,
      build: (toolClass, toolPackage) => checkToolsResolve(container, [{ ...toolPackage, tools: [toolClass] }]),
    });
    return container;
  } catch (error) {
    // Isolated packages hold worker threads: a start-up that fails ends them.
    await Promise.allSettled(toolPackages.map((toolPackage) => toolPackage.close()));
    throw error;
  }
}

async function composeWith(
  config: AptixConfig,
  options: ComposeOptions,
  logger: Logger,
  adminLogger: AdminLogger,
  toolPackages: readonly LoadedToolPackage[],
  liveTools: LiveTools,
): Promise<AwilixContainer<HostCradle>> {
  const container = createContainer<HostCradle>({ injectionMode: InjectionMode.PROXY, strict: true });
  // No logger: a violation stops start-up with a HostStartupError that says it all, printed once by the caller.
  const registry = new AgentToolRegistry();
  for (const toolPackage of toolPackages) {
    for (const toolClass of toolPackage.tools) {
      try {
        registry.registerTool(toolClass);
      } catch (error) {
        if (error instanceof ToolContractError) {
          throw new HostStartupError(
            `Tool package "${toolPackage.name}" has a tool that breaks the contract (${error.code}): ${error.message}`,
            { cause: error },
          );
        }
        throw new HostStartupError(
          `Tool package "${toolPackage.name}" has a tool the host cannot read: inspecting it threw ` +
            `${describeThrown(error)}. Fix: declare ToolName, ToolUsageMetadata, getSchema and ` +
            `TimeoutMs as plain static members.`,
          { cause: error },
        );
      }
    }
  }

  let modeCatalog: ModeCatalog;
  let warnings: readonly string[];
  try {
    let awaited: readonly string[];
    ({
      catalog: modeCatalog,
      warnings,
      awaited,
    } = await composeHostCatalog(config, toolPackages, registry, liveTools.livePackages()));
    liveTools.awaitTools(awaited);
    checkDeferredModes(config.deferredModes, modeCatalog);
  } catch (error) {
    throw new HostStartupError(`The mode catalog cannot be used: ${(error as Error).message}`, { cause: error });
  }
  let principals: PrincipalTable;
  try {
    principals = new PrincipalTable(
      config.principals,
      config.apiKeys.map((key) => key.name),
      config.allowSelfApproval,
      tokenPrincipalPermissions,
    );
  } catch (error) {
    throw new HostStartupError(`The configuration's principals cannot be used: ${(error as Error).message}`, {
      cause: error,
    });
  }

  let unitCatalog: HostUnits;
  try {
    let unitWarnings: readonly string[];
    ({ units: unitCatalog, warnings: unitWarnings } = HostUnits.compose(toolPackages, registry, modeCatalog, {
      promptModes: config.promptModes,
      resourceModes: config.resourceModes,
      source: config.file,
      maxBytes: config.maxResultBytes,
      timeoutMs: config.unitTimeoutMs,
    }));
    warnings = [...warnings, ...unitWarnings];
  } catch (error) {
    throw new HostStartupError((error as Error).message, { cause: error });
  }

  // Tools are constructor-injected and built per call, by the executor and the Reasoner alike.
  const createTool = toolFactory(container);
  container.register({
    config: asValue(config),
    pino: asValue(logger),
    logger: asValue(adminLogger),
    registry: asValue(registry),
    modeCatalog: asValue(modeCatalog),
    warnings: asValue(warnings),
    principals: asValue(principals),
    permissions: asFunction(
      ({ principals: table, toolPackages: packages, liveTools: live }: HostCradle) =>
        new HostPermissions(table, packages, live),
    ).singleton(),
    unitCatalog: asValue(unitCatalog),
    toolPackages: asValue(toolPackages),
    executor: asFunction(
      ({ registry: tools, logger: toolLogger }: HostCradle) =>
        new AgentToolExecutor({
          registry: tools,
          logger: toolLogger,
          defaultTimeoutMs: config.toolTimeoutMs,
          maxResultBytes: config.maxResultBytes,
          maxErrorMessageLength: config.maxErrorMessageLength,
          cancelGraceMs: config.toolCancelGraceMs,
          recordContentChars: config.telemetry?.recordContent ?? 0,
          // Tools are constructor-injected and built per call; they see only the names they ask for.
          createTool,
        }),
    ).singleton(),
  });

  const providedBy = new Map<string, string>();
  for (const toolPackage of toolPackages) {
    for (const [name, value] of Object.entries(toolPackage.dependencies)) {
      if (CORE_NAMES.has(name))
        throw new HostStartupError(
          `Tool package "${toolPackage.name}" provides a dependency named "${name}", which the host itself provides. Fix: rename it in its createDependencies.`,
        );
      const other = providedBy.get(name);
      if (other)
        throw new HostStartupError(
          `Tool packages "${other}" and "${toolPackage.name}" both provide a dependency named "${name}". Fix: give one of them another name.`,
        );
      providedBy.set(name, toolPackage.name);
      container.register(name, asValue(value));
    }
  }

  if (!options.withoutSessions) {
    try {
      const { url, schema } = splitSchema(config.db);
      const {
        maxReasonLength,
        maxKeyLength,
        historyPageSize,
        maxHistoryPageSize,
        sqliteBusyTimeoutMs,
        sqliteAuditWriter,
        postgres: timeouts,
      } = config.sessions;
      const storeOptions: OpenSessionStoreOptions = {
        modes: modeCatalog,
        logger,
        limits: { maxReasonLength, maxKeyLength, defaultHistoryPageSize: historyPageSize, maxHistoryPageSize },
        sqlite: { busyTimeoutMs: sqliteBusyTimeoutMs, auditWriter: sqliteAuditWriter },
        postgres: { ...(schema ? { schema } : {}), timeouts },
      };
      container.register('sessionManager', asValue(await openSessionStore(url, storeOptions)));
    } catch (error) {
      throw new HostStartupError(
        `The session store ${redactUrl(config.db)} cannot be opened: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  if (!options.withoutSessions) {
    container.register(
      'auditTrail',
      asFunction(
        ({ sessionManager, pino }: HostCradle) => new AuditTrail(() => sessionManager.audit, config.audit, pino),
      ).singleton(),
    );
    container.register(
      'reasoner',
      asFunction(
        ({
          registry: tools,
          executor,
          modeCatalog: modes,
          sessionManager,
          logger: toolLogger,
          liveTools,
          auditTrail,
          permissions,
        }: HostCradle) =>
          createReasoner({
            registry: tools,
            // Tools a package changes while the host runs (a bridged MCP server's) reach the agent loop too.
            offeredTools: (mode) => liveTools.offered(mode),
            // The agent loop's calls are held to the turn's principal's permissions and recorded in the
            // audit trail, like every surface's.
            executor: permittedExecutor(
              auditedExecutor(executor, auditTrail, (name) => tools.get(name)),
              permissions,
              (name) => tools.get(name),
            ),
            modeCatalog: modes,
            sessions: sessionManager,
            logger: toolLogger,
            model: {
              ...optional('baseURL', config.openai.baseUrl),
              ...optional('apiKey', config.openai.apiKey),
              ...optional('model', config.openai.model),
            },
            // The same factory as the executor's, so the Reasoner sees the tools the calls will run.
            createTool,
            deferred: config.deferredModes,
          }),
      ).singleton(),
    );
  }

  checkToolsResolve(container, toolPackages);
  return container;
}

/** `deferredModes` may name only modes of the catalog: a misspelt key would silently list a mode of a thousand tools. */
function checkDeferredModes(deferred: boolean | readonly string[], catalog: ModeCatalog): void {
  if (typeof deferred === 'boolean') return;
  const unknown = deferred.filter((key) => catalog.getMode(key) === undefined);
  if (unknown.length > 0) {
    throw new Error(
      `deferredModes names ${unknown.map((key) => `"${key}"`).join(', ')}, which the catalog does not have. Modes: ${catalog.keys.join(', ')}. Fix: use their keys, or true to defer every mode.`,
    );
  }
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

export { ToolPackageError };

export { checkToolsResolve, HostStartupError, redactUrl, splitSchema };
