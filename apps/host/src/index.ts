/**
 * @aptix/host: compose Aptix tool packages into one server. Everything exported here is public API;
 * most users only need the `aptix` CLI.
 */
export { AptixHost, presentResult, ScopeError, toSessionView, type CallOptions, type CallOutcome, type SessionView, type ToolScope } from './aptix-host.js';
export { AptixConfigFile, ConfigError, DEFAULT_TOOL_PACKAGES, isLoopback, loadConfig, parseConfigFile, type AptixConfig, type LoadConfigOptions } from './config.js';
export { checkToolsResolve, composeHost, HostStartupError, redactUrl, type ComposeOptions, type HostCradle } from './container.js';
export { createHttpServer, type HttpServer } from './http/server.js';
export { createMcpServer, type McpScope } from './mcp/mcp-server.js';
export { loadToolPackages, ToolPackageError, type LoadedToolPackage } from './tool-packages.js';
export { main, ExitCode, VERSION } from './cli/main.js';
