import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { detect } from 'detect-port';
import {
  AgentToolExecutor,
  AgentToolRegistry,
  CapturingAdminLogger,
  type AgentToolExecutionContext,
  type ToolProgress,
} from '@aptix/tool-contract';
import { McpBridge, parseBridgeOptions } from '../src/index.js';

const require = createRequire(import.meta.url);
const packageMain = (name: string) => {
  const manifest = require.resolve(`${name}/package.json`);
  const { bin } = require(manifest) as { bin: Record<string, string> };
  return join(dirname(manifest), Object.values(bin)[0]!);
};

/** The reference servers from the npm registry, and the fixture that changes its tool list. */
export const EVERYTHING = packageMain('@modelcontextprotocol/server-everything');
export const FILESYSTEM = packageMain('@modelcontextprotocol/server-filesystem');
export const CHANGING = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'changing-server.mjs');
/** A server on the v2 server SDK whose tools a test changes on command, over stdio or Streamable HTTP. */
export const LIVE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'live-server.mjs');
/** A server on the v2 server SDK whose prompts and resources a test changes on command, over stdio. */
export const UNITS = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'units-server.mjs');
/** A server on the v2 server SDK whose tools answer images, audio and embedded documents. */
export const CONTENT = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'content-server.mjs');
/** A server written without an SDK that answers content no SDK-built server sends (bad base64, huge images…). */
/** A server without an SDK listing invalid tools, or churning its list with --churn. */
export const HOSTILE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hostile-server.mjs');
/** A server without an SDK whose prompts and resources break the contract (hostile-units.test.ts). */
export const HOSTILE_UNITS = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hostile-units-server.mjs');
export const RAW_CONTENT = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'raw-content-server.mjs');

/** A TCP port nobody listens on right now. */
export const freePort = (): Promise<number> => detect(0);

/** server-everything over Streamable HTTP on `port`, as its own process; resolves once it listens. */
export async function startEverythingHttp(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('listening on port')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${text}`)));
  });
  return child;
}

export async function stop(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await exited;
}

/** A bridge registered in a real registry and run by a real executor, as a host does. */
export async function bridgeHarness(options: unknown) {
  const logger = new CapturingAdminLogger();
  // A generous connect time-out unless a test sets one: two cores shared by many test runs can make a server slow to start.
  const bridge = await McpBridge.start(parseBridgeOptions({ connectTimeoutMs: 30_000, ...(options as object) }), {
    logger,
  });
  const registry = new AgentToolRegistry({ logger });
  registry.registerTools(bridge.tools);
  const executor = new AgentToolExecutor({ registry, logger });
  const call = async (
    name: string,
    args: unknown,
    options?: Parameters<AgentToolExecutor['execute']>[3],
    context: Partial<AgentToolExecutionContext> = {},
  ) => {
    const result = await executor.execute(
      name,
      JSON.stringify(args),
      { sessionId: 's-1', conversationId: 'c-1', ...context },
      options,
    );
    return { ...result, value: result.successful ? (JSON.parse(result.result) as Record<string, unknown>) : undefined };
  };
  return { bridge, registry, executor, logger, call };
}

export function text(value: Record<string, unknown> | undefined): string {
  const content = (value?.content ?? []) as Array<{ type: string; text?: string }>;
  return content.map((block) => block.text ?? '').join('\n');
}

/** A caller that listens to progress: what it heard, and the context that asks for it. */
export function progressListener() {
  const reports: ToolProgress[] = [];
  return { reports, context: { reportProgress: (progress: ToolProgress) => reports.push(progress) } };
}
