/**
 * 6. The MCP bridge: a call of a tool a remote MCP server offers, through @aptix/tool-mcp-bridge and
 * the executor, against the same call made directly with the v2 SDK's Client, in the same run. Each
 * side has its own server-everything process, so neither waits on the other's queue; calls are
 * sequential (one in flight), and rounds alternate between the two sides.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { AgentToolExecutor, AgentToolRegistry, silentAdminLogger } from '@aptix/tool-contract';
import { McpBridge, parseBridgeOptions } from '@aptix/tool-mcp-bridge';
import { compare, type Subject } from '../harness.js';
import { freePort } from '../processes.js';
import type { Row } from '../report.js';

const SECTION = '6. MCP bridge: a bridged call against a direct SDK client call to the same server';
const require = createRequire(import.meta.url);
const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json');
const EVERYTHING = join(
  dirname(manifest),
  (require(manifest) as { bin: Record<string, string> }).bin['mcp-server-everything']!,
);
const CONTEXT = { sessionId: 'bench', conversationId: 'bench' };

export interface BridgeBenchOptions {
  readonly rounds?: number;
  readonly roundMs?: number;
}

async function everythingOverHttp(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
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
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

/** One transport's pair of contenders: the SDK client directly, and the bridged tool through the executor. */
async function pair(
  label: string,
  direct: Transport,
  bridgeOptions: unknown,
): Promise<{ subjects: Subject[]; close(): Promise<void> }> {
  const client = new Client({ name: 'aptix-bench', version: '0.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(direct);
  const bridge = await McpBridge.start(parseBridgeOptions(bridgeOptions), { logger: silentAdminLogger });
  const registry = new AgentToolRegistry();
  registry.registerTools(bridge.tools);
  const executor = new AgentToolExecutor({ registry, logger: silentAdminLogger });
  const name = bridge.tools.find((tool) => tool.RemoteToolName === 'echo')!.ToolName;
  return {
    subjects: [
      {
        name: `${label}: Client.callTool (direct)`,
        async run(n) {
          for (let i = 0; i < n; i++) {
            const result = await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
            if (result.isError) throw new Error('direct call failed');
          }
        },
      },
      {
        name: `${label}: bridged, AgentToolExecutor.execute`,
        async run(n) {
          for (let i = 0; i < n; i++) {
            const result = await executor.execute(name, '{"message":"hi"}', CONTEXT);
            if (!result.successful) throw new Error(`bridged call failed: ${result.errors[0]?.message}`);
          }
        },
      },
    ],
    async close() {
      await client.close();
      await bridge.close();
    },
  };
}

export async function mcpBridgeSection(options: BridgeBenchOptions, log: (line: string) => void): Promise<Row[]> {
  const rows: Row[] = [];
  const direct = await everythingOverHttp();
  const bridged = await everythingOverHttp();
  const contenders = [
    await pair(
      'stdio',
      new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }),
      { name: 'everything', stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    ),
    await pair('Streamable HTTP', new StreamableHTTPClientTransport(new URL(direct.url)), {
      name: 'everything',
      http: { url: bridged.url },
    }),
  ];
  try {
    for (const { subjects } of contenders) {
      log(`  ${subjects[0]!.name.split(':')[0]}`);
      const [baseline, bridgedTiming] = await compare(subjects, {
        rounds: options.rounds ?? 9,
        roundMs: options.roundMs ?? 300,
      });
      rows.push({
        section: SECTION,
        measure: baseline!.name,
        figure: baseline!.opsPerSec,
        unit: 'calls/s',
        note: `${(baseline!.nsPerOp / 1000).toFixed(0)} µs per call: the SDK client alone, over the same transport, to its own copy of the server.`,
      });
      rows.push({
        section: SECTION,
        measure: bridgedTiming!.name,
        figure: bridgedTiming!.opsPerSec,
        unit: 'calls/s',
        baseline: { name: 'direct', figure: baseline!.opsPerSec },
        goal: { kind: 'ratio-at-least', value: 0.9 },
        note:
          `${(bridgedTiming!.nsPerOp / 1000).toFixed(0)} µs per call, ` +
          `${((bridgedTiming!.nsPerOp - baseline!.nsPerOp) / 1000).toFixed(0)} µs more: the registry ` +
          `lookup, argument checks (executor and bridge), the deadline and the InvokeResult.`,
      });
    }
  } finally {
    for (const contender of contenders) await contender.close();
    direct.child.kill();
    bridged.child.kill();
  }
  return rows;
}
