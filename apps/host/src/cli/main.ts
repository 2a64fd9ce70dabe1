import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { describeThrown, progressGate, ToolContractError } from '@aptix/tool-contract';
import { ReasonerError } from '@aptix/reasoner';
import { AptixHost, presentResult, ScopeError } from '../aptix-host.js';
import { ConfigError, loadConfig } from '../config.js';
import { composeHost, HostStartupError, ToolPackageError, type ComposeOptions } from '../container.js';
import { createMcpServer, type McpScope } from '../mcp/mcp-server.js';
import { chat } from './chat.js';
import { pendingApprovalView } from '../approvals/present.js';
import { registerApprovalCommands } from './approvals.js';
import { registerAuditCommand } from './audit.js';
import { registerUnitCommands } from './units.js';
import { Output, table } from './output.js';
import { ListenError, serve, SERVE_HELP } from './serve.js';
import { superviseHostProcess, type HostProcess } from './host-process.js';

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Exit codes: 0 success, 1 a failed tool call or check, 2 a usage error. */
export const ExitCode = { OK: 0, FAILED: 1, USAGE: 2 } as const;

class UsageError extends Error {}

interface GlobalOptions {
  config?: string;
  json?: boolean;
}

function port(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535)
    throw new InvalidArgumentError('must be a whole number from 0 to 65535.');
  return parsed;
}

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(parsed) || parsed < 1)
    throw new InvalidArgumentError('must be a whole number, 1 or more.');
  return parsed;
}

/** Runs the `aptix` CLI and resolves with its exit code. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  let exitCode: number = ExitCode.OK;
  /** Set by `aptix mcp`, whose stdout is the protocol's: nothing else may be written there. */
  let protocolStdout = false;
  /** Set by the commands whose process runs the tool packages: it ends the process when they have ended. */
  let hostProcess: HostProcess | undefined;
  const program = new Command('aptix')
    .description('Host Aptix tool packages over HTTP, MCP and the OpenAI function formats.')
    .version(VERSION)
    .option('-c, --config <file>', 'configuration file (default: ./aptix.config.json if present)')
    .option('--json', 'print exactly one JSON document on stdout (the default when stdout is not a terminal)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });

  const output = () =>
    new Output(!protocolStdout && (Boolean(program.opts<GlobalOptions>().json) || !process.stdout.isTTY));

  /** Composes the host, runs `work`, and always closes the host. */
  const withHost = async (
    work: (host: AptixHost, out: Output) => Promise<number | void>,
    overrides?: AptixConfigOverrides,
    compose?: ComposeOptions,
  ) => {
    const out = output();
    const config = await loadConfig({
      ...optionalFile(program.opts<GlobalOptions>().config),
      ...(overrides ? { overrides } : {}),
      defaultLogLevel: 'warn',
    });
    hostProcess?.watch(config);
    const host = new AptixHost(await composeHost(config, compose));
    try {
      exitCode = (await work(host, out)) ?? ExitCode.OK;
    } finally {
      await host.close();
    }
  };

  program
    .command('serve')
    .description('serve the tools over HTTP, with MCP at /mcp')
    .option('--host <address>', 'address to listen on (default 127.0.0.1, or APTIX_HOST)')
    .addOption(new Option('--port <port>', 'port to listen on (default 8787, or APTIX_PORT)').argParser(port))
    .addHelpText('after', SERVE_HELP)
    .action(async (options: { host?: string; port?: number }) => {
      hostProcess = superviseHostProcess();
      await serve(
        await loadConfig({ ...optionalFile(program.opts<GlobalOptions>().config), overrides: options }),
        VERSION,
        hostProcess,
      );
    });

  program
    .command('mcp')
    .description('serve the tools over MCP on stdio (protocol 2026-07-28, and 2025-era clients)')
    .option(
      '--session <id>',
      'work in this agent session (default: a new session in the default mode for 2025-era clients; none for 2026-07-28 clients until agent_change_mode)',
    )
    .option(
      '--mode <mode>',
      "the mode whose tools 2026-07-28 clients are offered (default: the session's mode, else the default mode)",
    )
    .action(async (options: { session?: string; mode?: string }) => {
      // stdout carries protocol messages only: failures go to stderr.
      protocolStdout = true;
      const supervised = (hostProcess = superviseHostProcess());
      const { containment } = supervised;
      await withHost(async (host) => {
        containment.attach(host.cradle.pino, host.cradle.toolPackages);
        const session = options.session === undefined ? undefined : await host.requireSession(options.session);
        const listMode = options.mode ?? session?.mode ?? host.cradle.modeCatalog.defaultMode.key;
        await host.toolNames({ mode: listMode });
        supervised.served(false);
        const closed = new Promise<void>((resolve) => {
          const handle = serveStdio(
            async ({ era }) => {
              // Without --mode, the pair aptix_find_tools / aptix_call_tool reaches every mode's tools (see docs/mcp.md).
              const discovery = options.mode === undefined;
              // One server for the connection: a session the first agent_change_mode starts is kept for its later calls.
              if (era === 'modern')
                return createMcpServer(
                  host,
                  { era, agentSessionId: session?.id, listMode, discovery, longLived: true },
                  VERSION,
                );
              const agentSessionId = session?.id ?? (await host.createSession()).id;
              host.cradle.pino.info({ agentSessionId }, 'MCP over stdio, 2025-era client');
              const scope: McpScope = { era, agentSessionId, longLived: true, discovery };
              return createMcpServer(host, scope, VERSION);
            },
            { onerror: (error) => host.cradle.pino.debug({ err: error }, 'MCP stdio error') },
          );
          process.stdin.once('end', () => void handle.close().finally(resolve));
          process.stdin.once('close', () => void handle.close().finally(resolve));
        });
        await closed;
      });
    });

  program
    .command('check')
    .description(
      'the startup contract check: load every tool package, check every tool and build each from the container',
    )
    .action(async () => {
      // A check never serves: escaped errors keep Node's default (they fail it), but no package ends it.
      hostProcess = superviseHostProcess({ escapes: false });
      await withHost(async (host, out) => {
        const { toolPackages, registry, modeCatalog, warnings } = host.cradle;
        const report = {
          ok: true,
          toolPackages: toolPackages.map((p) => ({
            name: p.name,
            version: p.version ?? null,
            tools: p.tools.map((t) => t.ToolName),
          })),
          tools: registry.size,
          modes: modeCatalog.keys,
          warnings,
        };
        for (const warning of warnings) process.stderr.write(`aptix: warning: ${warning}\n`);
        out.print(
          report,
          (r: typeof report) =>
            `ok: ${r.tools} tools from ${r.toolPackages.length} packages satisfy the contract\n${table(r.toolPackages.map((p) => [p.name, p.tools.join(', ')]))}`,
        );
      });
    });

  const tools = program.command('tools').description('list and call tools');
  tools
    .command('list')
    .description("list the tool definitions, for a mode or a session's current mode")
    .option('--mode <key>', "only this mode's tools")
    .option('--session <id>', "only the tools of this session's current mode")
    .addOption(
      new Option('--format <format>', 'definition format').choices(['responses', 'chat', 'mcp']).default('responses'),
    )
    .action(async (options: { mode?: string; session?: string; format: 'responses' | 'chat' | 'mcp' }) => {
      if (options.mode !== undefined && options.session !== undefined)
        throw new UsageError('Give either --mode or --session, not both.');
      await withHost(async (host, out) => {
        const definitions = await host.definitions(options.format, {
          ...(options.mode ? { mode: options.mode } : {}),
          ...(options.session ? { sessionId: options.session } : {}),
        });
        const registry = host.cradle.registry;
        out.print({ format: options.format, tools: definitions }, () =>
          table(
            definitions.map((d) => {
              const name = 'function' in d ? d.function.name : d.name;
              return [name, registry.get(name)?.description ?? ''];
            }),
          ),
        );
      });
    });

  tools
    .command('call')
    .description('call a tool and print { successful, result, errors }')
    .argument('<name>', 'the tool')
    .argument('[arguments-json]', 'the arguments as one JSON object', '{}')
    .option('--session <id>', "call within this session (only its current mode's tools are allowed)")
    .option('--conversation <id>', 'the conversation id to put in the context')
    .option('--progress', "print the tool's progress reports on stderr, one JSON object a line")
    .action(
      async (name: string, args: string, options: { session?: string; conversation?: string; progress?: boolean }) => {
        checkJsonArgument(args);
        await withHost(async (host, out) => {
          // Bounded like on every surface; the last report waiting is printed before the result.
          const progress = options.progress
            ? progressGate((report) => process.stderr.write(`${JSON.stringify({ progress: report })}\n`))
            : undefined;
          const outcome = await host
            .call(name, args, {
              ...(options.session ? { sessionId: options.session } : {}),
              ...(options.conversation ? { conversationId: options.conversation } : {}),
              ...(progress ? { onProgress: progress.report } : {}),
            })
            .finally(() => progress?.end());
          if (outcome.kind === 'pending_approval') {
            const view = pendingApprovalView(outcome.approval);
            out.print(view, () => view.message);
            return ExitCode.OK;
          }
          if (outcome.kind !== 'result') {
            out.fail(outcome.kind === 'not_found' ? 'TOOL_NOT_FOUND' : outcome.code, outcome.message);
            return ExitCode.FAILED;
          }
          out.print(presentResult(outcome.result));
          return outcome.result.successful ? ExitCode.OK : ExitCode.FAILED;
        });
      },
    );

  registerApprovalCommands(program, withHost);
  registerAuditCommand(program, withHost);
  registerUnitCommands(program, withHost);

  const sessions = program.command('sessions').description('create and inspect agent sessions');
  sessions
    .command('create')
    .description('create an agent session and print { id, mode }')
    .option('--mode <key>', "the starting mode (default: the catalog's default)")
    .option('--org <org>', 'the organisation the session belongs to')
    .option('--user <user>', 'the user the session belongs to')
    .action(async (options: { mode?: string; org?: string; user?: string }) => {
      await withHost(async (host, out) => {
        const session = await host.createSession(options);
        out.print(
          { id: session.id, mode: session.mode },
          (s: { id: string; mode: string }) => `${s.id}  (mode ${s.mode})`,
        );
      });
    });
  sessions
    .command('show')
    .description('print a session: { id, mode, history, nextCursor }, one page of its mode history at a time')
    .argument('<id>', 'the session id')
    .option('--limit <n>', "history rows to print (default: the host's sessions.historyPageSize, 100)", positiveInteger)
    .option('--cursor <cursor>', 'print the page after this one: the nextCursor of the previous page')
    .action(async (id: string, options: { limit?: number; cursor?: string }) => {
      await withHost(async (host, out) => {
        const session = await host.getSessionPage(id, options);
        if (session === undefined) {
          out.fail('SESSION_NOT_FOUND', `Session "${id}" does not exist.`);
          return ExitCode.FAILED;
        }
        const { id: sessionId, mode, history, nextCursor } = session;
        out.print({ id: sessionId, mode, history, nextCursor });
        return ExitCode.OK;
      });
    });

  program
    .command('chat')
    .description(
      'chat with the agent in a session; tool calls show as they happen (needs a model: APTIX_MODEL, OPENAI_API_KEY, OPENAI_BASE_URL)',
    )
    .option('--session <id>', 'continue this session (default: a new session in the default mode)')
    .option('--message <text>', 'send one message, print the answer as JSON, and exit (for scripts)')
    .action(async (options: { session?: string; message?: string }) => {
      await withHost((host, out) => chat(host, out, options));
    });

  program
    .command('modes')
    .description('the mode catalog')
    .command('list')
    .description('list the modes and the tools each offers')
    .action(async () => {
      await withHost(async (host, out) => {
        const modes = host.modes();
        out.print({ modes }, () =>
          table(modes.map((m) => [m.key + (m.isDefault ? ' (default)' : ''), m.displayName, m.tools.join(', ')])),
        );
      });
    });

  const ended = (code: number) => {
    hostProcess?.finish(code);
    return code;
  };
  try {
    await program.parseAsync(argv);
    return ended(exitCode);
  } catch (error) {
    try {
      return ended(report(error, output()));
    } catch {
      // What was thrown cannot even be inspected (a Proxy whose traps throw): say so, never crash here.
      output().fail('UNEXPECTED', `unexpected error: ${describeThrown(error)}`);
      return ended(ExitCode.FAILED);
    }
  }
}

type AptixConfigOverrides = { host?: string; port?: number };

/** The arguments of `tools call` must be JSON text: anything else is a mistake on the command line, not a tool failure. */
function checkJsonArgument(text: string): void {
  try {
    JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `The arguments ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)} are not valid JSON (${(error as Error).message}). ` +
        `Fix: pass one JSON object in single quotes, e.g. aptix tools call testing_calculator '{"operation":"add","a":1,"b":2}'.`,
    );
  }
}

function optionalFile(file: string | undefined): { file?: string } {
  return file === undefined ? {} : { file };
}

function report(error: unknown, out: Output): number {
  if (error instanceof CommanderError) {
    if (
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      error.code === 'commander.help'
    )
      return ExitCode.OK;
    return ExitCode.USAGE;
  }
  if (error instanceof UsageError) {
    out.fail('USAGE', error.message);
    return ExitCode.USAGE;
  }
  if (error instanceof ConfigError) {
    out.fail('CONFIG', error.message);
    return ExitCode.USAGE;
  }
  if (error instanceof ReasonerError) {
    out.fail(error.code, error.message);
    return ExitCode.FAILED;
  }
  if (error instanceof ScopeError) {
    out.fail(error.code, error.message);
    return ExitCode.FAILED;
  }
  if (error instanceof ListenError) {
    out.fail(error.code, error.message);
    return ExitCode.FAILED;
  }
  if (error instanceof HostStartupError || error instanceof ToolPackageError || error instanceof ToolContractError) {
    out.fail('STARTUP', error.message);
    return ExitCode.FAILED;
  }
  out.fail('UNEXPECTED', `unexpected error: ${describeThrown(error)}`);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- kept for callers in plain JavaScript and tool packages, which can pass what the type rules out
  if (process.env.APTIX_DEBUG) process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
  return ExitCode.FAILED;
}
