/**
 * @aptix/tool-mcp-bridge: a remote MCP server's tools as Aptix tools, under the same contract, modes,
 * time-outs and result envelope as any tool package. Everything exported here is public API.
 */
import type { PackageUnits, ToolList, ToolPackageHost } from '@aptix/tool-contract';
import { McpBridge } from './bridge.js';
import { parseBridgeOptions } from './options.js';

export { McpBridge, type BridgedToolReport, type McpBridgeDependencies } from './bridge.js';
export { MAX_BRIDGED_UNITS } from './bridged-units.js';
export { type BridgedToolClass, type RemoteToolStatus } from './bridged-tool.js';
export { toInvokeResult, type RemoteToolRef } from './remote-result.js';
export { BRIDGE_ERROR_MEANINGS, BridgeErrorCode, McpBridgeError } from './codes.js';
export { convertInputSchema, type ConvertedSchema } from './convert-schema.js';
export { aptixNames, defaultPrefix, snakeCase, stableNames } from './naming.js';
export {
  McpBridgeOptionsSchema,
  parseBridgeOptions,
  resolveValues,
  type FromEnv,
  type McpBridgeOptions,
} from './options.js';
export { GENERATED_MARKER } from './usage-text.js';

/** No tools are known before a server is asked: every tool comes from {@link createTools}. */
export const tools = [] as const satisfies ToolList;

/**
 * The tool-package entry a host calls at start-up with the options of its `toolPackages` entry:
 * connects to the server, lists its tools and returns their classes. An unreachable server throws an
 * McpBridgeError naming it (the host stops, or skips an entry marked `optional`).
 *
 * @example
 * // aptix.config.json
 * { "toolPackages": [{ "package": "@aptix/tool-mcp-bridge", "options": { "name": "files", "stdio": { "command": "npx", "args": ["mcp-server-filesystem", "/srv/docs"] } } }] }
 */
export async function createTools(host: ToolPackageHost): Promise<ToolList> {
  // A host that follows tool changes gets the server's later tools too; the package has no static tools.
  const toolsChanged = host.toolsChanged;
  const bridge = await McpBridge.start(parseBridgeOptions(host.options), {
    logger: host.logger,
    ...(typeof toolsChanged === 'function' ? { onToolsChanged: (tools) => toolsChanged(tools) } : {}),
  });
  started.add(bridge);
  byHost.set(host, bridge);
  return bridge.tools;
}

const started = new Set<McpBridge>();
/** The bridge each entry's createTools started, for its createUnits (the host calls both with one host object). */
const byHost = new WeakMap<ToolPackageHost, McpBridge>();

/**
 * The server's prompts and resources, under the same prefix and modes as its tools: the host calls it
 * after {@link createTools} for the same entry. A unit that breaks the contract is left out with a warning.
 * A host that follows changes (`host.unitsChanged`) gets the server's later lists, after its
 * prompts/list_changed or resources/list_changed.
 */
export async function createUnits(host: ToolPackageHost): Promise<PackageUnits> {
  const bridge = byHost.get(host);
  if (bridge === undefined) return {};
  const units = await bridge.units();
  // A host that follows unit changes gets the server's later prompts and resources too.
  const unitsChanged = host.unitsChanged;
  if (typeof unitsChanged === 'function') bridge.followUnits((changed) => unitsChanged(changed));
  return units;
}

/**
 * Closes every bridge `createTools` started: stdio servers are stopped, HTTP connections (whose
 * notification stream would otherwise keep the process alive) are closed. A host calls it when it stops.
 */
export async function close(): Promise<void> {
  const bridges = [...started];
  started.clear();
  await Promise.all(bridges.map((bridge) => bridge.close()));
}
