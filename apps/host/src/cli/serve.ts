import { AptixHost } from '../aptix-host.js';
import { ConfigError, isLoopback, type AptixConfig } from '../config.js';
import { composeHost, redactUrl } from '../container.js';
import { createHttpServer, type HttpServer } from '../http/server.js';
import { startTelemetry } from '../telemetry/sdk.js';
import { avoidPretenuring, boundHeapGrowth } from '../heap-policy.js';
import type { HostProcess } from './host-process.js';

/** The server could not listen: the port is taken, the address is not this machine's, or not allowed. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
  constructor(
    readonly code: 'PORT_IN_USE' | 'ADDRESS_NOT_AVAILABLE' | 'PERMISSION_DENIED',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The environment variables `aptix serve` reads, for its --help. */
export const SERVE_HELP = `
Environment (the configuration file's fields are in docs/hosting.md):
  APTIX_HOST            address to listen on (default 127.0.0.1; ::1 and [::1] for IPv6)
  APTIX_PORT            port to listen on (default 8787; --port wins)
  APTIX_DB              session store: sqlite:<path> or postgres://…
  APTIX_API_KEY         the API key clients send as "Authorization: Bearer <key>"
  APTIX_API_KEYS        more keys, comma-separated, each <key> or <name>=<key> (for rotation)
  LOG_LEVEL             fatal, error, warn, info (default), debug, trace, silent

Stop it with SIGTERM or Ctrl-C: calls in flight finish (up to shutdownTimeoutMs), then it exits.
Run it under a process manager as \`node_modules/.bin/aptix serve\`, not through npx, which does not pass SIGTERM on.`;

/**
 * `aptix serve`: listens, logs where, and on SIGTERM or SIGINT stops accepting, lets the calls in
 * flight finish for up to `shutdownTimeoutMs`, then closes every remaining connection (slow clients,
 * open streams) and resolves. A second signal closes them at once. Until it listens, `hostProcess`
 * answers a signal (see host-process.ts); it was installed before any package loaded, so what escapes
 * a tool, or tries to end the process, is logged and contained, never fatal.
 */
export async function serve(config: AptixConfig, version: string, hostProcess: HostProcess): Promise<void> {
  refuseOpenBinding(config);
  boundHeapGrowth(config.heapGrowthPercent);
  avoidPretenuring();
  const { containment } = hostProcess;
  hostProcess.watch(config);
  // Before the host is composed, so every package's instruments find the SDK (off unless configured).
  const telemetry = await startTelemetry(config.telemetry, version);
  const host = new AptixHost(await composeHost(config, { logDestination: 1 }));
  const { pino } = host.cradle;
  telemetry?.useLogger(pino);
  containment.attach(pino, host.cradle.toolPackages);
  let server: HttpServer;
  let url: string;
  try {
    server = await createHttpServer(host, version);
    url = await listen(server, config);
  } catch (error) {
    await host.close();
    await telemetry?.shutdown();
    throw error;
  }
  for (const warning of host.cradle.warnings) pino.warn(warning);
  // Expires undecided approvals and picks up what a stopped host left, on every serving host.
  host.approvals().start(config.approvalSweepIntervalMs, config.approvalOrphanAfterMs);
  // Prunes the audit trail past its retention, on every serving host (docs/audit.md).
  host.audit.startPruning();
  const packages = host.cradle.toolPackages.map((p) => `${p.name}${p.version ? `@${p.version}` : ''}`);
  // The console first: it is where a newcomer looks at the tools and tries them.
  const consoleUrl = config.console ? `${url}/console/` : undefined;
  pino.info(
    {
      url,
      ...(consoleUrl ? { console: consoleUrl } : {}),
      docs: `${url}/docs`,
      mcp: `${url}/mcp`,
      toolPackages: packages,
      tools: host.cradle.registry.size,
      db: redactUrl(config.db),
    },
    `Aptix listening on ${url} (${consoleUrl ? `console ${consoleUrl}, ` : ''}docs ${url}/docs, MCP ${url}/mcp); tool packages: ${packages.join(', ')}`,
  );

  hostProcess.served(true);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  const closeAll = (why: string) => {
    pino.warn({ shutdownTimeoutMs: config.shutdownTimeoutMs }, `closing every remaining connection: ${why}`);
    server.app.server.closeAllConnections();
  };
  pino.info(
    { signal, shutdownTimeoutMs: config.shutdownTimeoutMs },
    `shutting down: finishing the calls in flight (for up to ${config.shutdownTimeoutMs} ms)`,
  );
  const deadline = setTimeout(
    () => closeAll(`calls still in flight after ${config.shutdownTimeoutMs} ms`),
    config.shutdownTimeoutMs,
  );
  const again = () => closeAll('a second signal');
  process.once('SIGTERM', again);
  process.once('SIGINT', again);
  try {
    await server.close();
  } finally {
    clearTimeout(deadline);
    await host.close();
    await telemetry?.shutdown();
  }
  pino.info('shut down');
  // Work that ignored its cancellation (a tool's own timer) must not keep a stopped host running.
  setTimeout(() => {
    pino.warn('work that ignored its cancellation is still running: exiting anyway');
    containment.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  }, 2000).unref();
}

async function listen(server: HttpServer, config: AptixConfig): Promise<string> {
  try {
    return await server.app.listen({ host: config.host, port: config.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
    if (code === 'EADDRINUSE') {
      throw new ListenError(
        'PORT_IN_USE',
        `Port ${config.port} on ${config.host} is already in use by another program. Fix: stop it, or choose another port with --port <port> or APTIX_PORT (0 picks a free one).`,
        { cause: error },
      );
    }
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      throw new ListenError(
        'ADDRESS_NOT_AVAILABLE',
        `Cannot listen on ${where}: "${config.host}" is not an address of this machine. Fix: use one of its addresses (127.0.0.1, ::1, or 0.0.0.0 for every interface) with --host or APTIX_HOST.`,
        { cause: error },
      );
    }
    if (code === 'EACCES') {
      throw new ListenError(
        'PERMISSION_DENIED',
        `Not allowed to listen on ${where}: ports below 1024 need privileges. Fix: use a port from 1024 up with --port or APTIX_PORT, and put a reverse proxy in front (docs/hosting.md).`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** Without an API key or OAuth, only loopback: anyone who can reach the port could otherwise call every tool. */
function refuseOpenBinding(config: AptixConfig): void {
  if (config.apiKeys.length === 0 && config.oauth === undefined && !isLoopback(config.host)) {
    throw new ConfigError(
      `Refusing to listen on ${config.host} without an API key: anyone who can reach it could ` +
        `call every tool. Fix: set APTIX_API_KEY or APTIX_API_KEYS (or apiKey in the ` +
        `configuration), configure oauth (docs/hosting.md, "OAuth"), or listen on 127.0.0.1.`,
    );
  }
}
