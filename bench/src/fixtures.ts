/**
 * What several sections share: the ping-pong function itself, variants of the tool that differ only in
 * how they answer, and an in-process host built exactly as `aptix serve` builds it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AptixHost, composeHost, loadConfig } from '@aptix/host';
import { TypedAgentTool, type AgentToolExecutionContext, type ToolDependencies } from '@aptix/tool-contract';
import { PingPongTool } from '@aptix/tool-samples';
import { FIRST_PARTY_PACKAGES } from './paths.js';

export const PING_ARGS = { message: 'hello', count: 2 } as const;
export const PING_JSON = JSON.stringify(PING_ARGS);
export const CONTEXT: AgentToolExecutionContext = { sessionId: 'bench-session', conversationId: 'bench-conversation' };

type PingArgs = { message: string; count?: number };
type Pong = { reply: string; count: number; sessionId: string | null; conversationId: string | null };

/** The body of `testing_ping_pong` itself (its `run`), which every contender calls. */
export const pong = (
  PingPongTool.prototype as unknown as { run(args: PingArgs, context: AgentToolExecutionContext): Pong }
).run;

const schema = PingPongTool.getSchema();

// `TypedAgentTool` wants a TypeBox type; the plain JSON schema is what TypeBox builds, minus its symbols.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyArgs = any;

/** ping-pong whose `run` is async: the executor then races the call against its deadline. */
export class AsyncPingPongTool extends TypedAgentTool<AnyArgs> {
  static readonly ToolName = 'bench_ping_pong_async';
  static readonly ToolUsageMetadata = 'ping-pong, answering through a promise.';
  static getSchema() {
    return { ...schema, name: AsyncPingPongTool.ToolName };
  }
  constructor({ logger }: ToolDependencies) {
    super(schema.parameters as AnyArgs, logger);
  }
  protected async run(args: PingArgs, context: AgentToolExecutionContext) {
    return pong(args, context);
  }
}

/** ping-pong whose `run` declares the signal parameter, so the executor makes an AbortSignal per call. */
export class SignalPingPongTool extends TypedAgentTool<AnyArgs> {
  static readonly ToolName = 'bench_ping_pong_signal';
  static readonly ToolUsageMetadata = 'ping-pong, taking its AbortSignal.';
  static getSchema() {
    return { ...schema, name: SignalPingPongTool.ToolName };
  }
  constructor({ logger }: ToolDependencies) {
    super(schema.parameters as AnyArgs, logger);
  }
  protected run(args: PingArgs, context: AgentToolExecutionContext, signal: AbortSignal) {
    if (signal.aborted) throw new Error('aborted before it started');
    return pong(args, context);
  }
}

export interface BenchHost {
  readonly host: AptixHost;
  readonly dir: string;
  close(): Promise<void>;
}

/**
 * A host composed in this process from the default configuration (the first-party tool packages, the
 * shipped catalog), on its own SQLite file or the PostgreSQL URL given, logging nothing.
 */
export async function composeBenchHost(
  options: { db?: string; toolPackages?: readonly string[] } = {},
): Promise<BenchHost> {
  const dir = mkdtempSync(join(tmpdir(), 'aptix-bench-'));
  const env = {
    APTIX_DB: options.db ?? `sqlite:${join(dir, 'aptix.db')}`,
    APTIX_TOOL_PACKAGES: (options.toolPackages ?? FIRST_PARTY_PACKAGES).join(','),
    LOG_LEVEL: 'silent',
  };
  const host = new AptixHost(await composeHost(await loadConfig({ env, cwd: dir })));
  return {
    host,
    dir,
    async close() {
      await host.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
