import type { LoggingLevel, ServerContext } from '@modelcontextprotocol/server';
import { logGate, progressGate, type LogGate, type ProgressGate } from '@aptix/tool-contract';

/** What a call sends its MCP client while it runs: progress and log notifications on the request's own stream. */

/**
 * Sends a tool's progress reports as `notifications/progress` on the request's own stream, when the
 * client sent a progress token, through the progress gate: only reports that grow, bounded in rate
 * (a flood sends the newest), none after the answer.
 */
export function progressReporter(token: string | number | undefined, ctx: ServerContext): ProgressGate | undefined {
  if (token === undefined) return undefined;
  return progressGate((progress) => {
    ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken: token, ...progress } })
      .catch(() => undefined);
  });
}

/**
 * Sends a tool's log entries at or above `threshold` as `notifications/message`, through the log gate
 * (bounded in size and rate), until the call answers. The gate is made at the first entry: every call
 * of a 2025 session has a forwarder, and most tools never log to their caller.
 */
export function logForwarder(tool: string, threshold: LoggingLevel, ctx: ServerContext): LogGate {
  let gate: LogGate | undefined;
  let open = true;
  return {
    log(level, message, data) {
      if (!open) return;
      gate ??= logGate(
        (entry) => {
          ctx.mcpReq
            .notify({
              method: 'notifications/message',
              params: {
                level: entry.level,
                logger: tool,
                data: entry.data === undefined ? entry.message : { message: entry.message, data: entry.data },
              },
            })
            .catch(() => undefined);
        },
        { minLevel: threshold },
      );
      gate.log(level, message, data);
    },
    end() {
      open = false;
      gate?.end();
    },
  };
}
