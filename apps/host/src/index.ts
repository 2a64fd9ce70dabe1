/**
 * @aptix/host: compose Aptix tool packages into one server. Everything exported here is public API;
 * most users only need the `aptix` CLI.
 */
export {
  AptixHost,
  presentResult,
  ScopeError,
  toSessionView,
  type CallOptions,
  type CallOutcome,
  type SessionView,
  type ToolScope,
} from './aptix-host.js';
export {
  AptixConfigFile,
  ConfigError,
  DEFAULT_TOOL_PACKAGES,
  isLoopback,
  loadConfig,
  parseConfigFile,
  type AptixConfig,
  type LoadConfigOptions,
} from './config.js';
export {
  checkToolsResolve,
  composeHost,
  HostStartupError,
  redactUrl,
  type ComposeOptions,
  type HostCradle,
} from './container.js';
export { createHttpServer, type HttpServer } from './http/server.js';
export { createMcpServer, type McpScope } from './mcp/mcp-server.js';
export { loadToolPackages, type ToolPackagesSettings } from './load-tool-packages.js';
export { ToolPackageError, type LoadedToolPackage } from './tool-packages.js';
export {
  DEFAULT_ISOLATED_WORKERS,
  DEFAULT_STARTUP_TIMEOUT_MS,
  ToolPackageEntry,
  type ToolPackageConfig,
  type WorkerResourceLimits,
} from './tool-package-config.js';
export { installContainment, type Containment } from './containment.js';
export { main, ExitCode, VERSION } from './cli/main.js';
