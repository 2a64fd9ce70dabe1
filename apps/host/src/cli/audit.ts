import type { Command } from 'commander';
import { SessionStoreError, type AuditFilter, type AuditKind, type AuditRecord } from '@aptix/agent-sessions';
import type { AptixHost } from '../aptix-host.js';
import { table, type Output } from './output.js';

type WithHost = (work: (host: AptixHost, out: Output) => Promise<number | void>) => Promise<void>;

interface AuditOptions {
  tool?: string;
  principal?: string;
  session?: string;
  outcome?: string;
  kind?: string;
  since?: string;
  until?: string;
  limit?: string;
  cursor?: string;
}

function row(record: AuditRecord): string[] {
  return [
    record.at,
    record.kind,
    record.tool,
    record.principal ?? '-',
    record.sessionId ?? '-',
    record.outcome,
    record.durationMs === null ? '-' : `${record.durationMs} ms`,
    record.traceId ?? '-',
    record.id,
  ];
}

/** The options as the store's filter; undefined (after saying why) when --limit is not a number. */
function filterOf(options: AuditOptions, out: Output): AuditFilter | undefined {
  const limit = options.limit === undefined ? undefined : Number(options.limit);
  if (limit !== undefined && !/^\d{1,4}$/.test(options.limit!)) {
    out.fail('BAD_REQUEST', `--limit "${options.limit!.slice(0, 40)}" is not a whole number from 1 to 1000.`);
    return undefined;
  }
  return {
    ...(options.tool === undefined ? {} : { tool: options.tool }),
    ...(options.principal === undefined ? {} : { principal: options.principal }),
    ...(options.session === undefined ? {} : { sessionId: options.session }),
    ...(options.outcome === undefined ? {} : { outcome: options.outcome }),
    ...(options.kind === undefined ? {} : { kind: options.kind as AuditKind }),
    ...(options.since === undefined ? {} : { since: options.since }),
    ...(options.until === undefined ? {} : { until: options.until }),
    ...(limit === undefined ? {} : { limit }),
    ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
  };
}

/** `aptix audit [id]`: the audit trail, read from the session store directly (as `aptix approvals` does). */
export function registerAuditCommand(program: Command, withHost: WithHost): void {
  program
    .command('audit')
    .description('the audit trail, newest first: calls that changed something, approval decisions, mode changes')
    .argument('[id]', 'show this one record')
    .option('--tool <name>', "only this tool's records")
    .option('--principal <name>', "only this principal's (an API key's name or an OAuth subject)")
    .option('--session <id>', "only this agent session's")
    .option('--outcome <code>', 'only this outcome (OK, or an error code such as TIMEOUT)')
    .option('--kind <kind>', 'only tool_call, approval_decision or mode_change records')
    .option('--since <time>', 'records at or after this ISO-8601 time')
    .option('--until <time>', 'records before this ISO-8601 time')
    .option('--limit <n>', 'records in the page, 1 to 1000', '50')
    .option('--cursor <cursor>', 'the next page: the cursor the previous page printed')
    .action(async (id: string | undefined, options: AuditOptions) => {
      await withHost(async (host, out) => {
        const audit = host.cradle.sessionManager.audit;
        if (id !== undefined) {
          const record = await audit.get(id);
          if (record === undefined) {
            out.fail(
              'AUDIT_RECORD_NOT_FOUND',
              `Audit record "${id.slice(0, 40)}" does not exist (or was pruned). List records with \`aptix audit\`.`,
            );
            return 1;
          }
          out.print(record);
          return 0;
        }
        const filter = filterOf(options, out);
        if (filter === undefined) return 2;
        try {
          const page = await audit.list(filter);
          out.print(page, () =>
            page.records.length === 0
              ? 'No audit records.'
              : table([
                  ['at', 'kind', 'tool', 'principal', 'session', 'outcome', 'duration', 'trace id', 'id'],
                  ...page.records.map(row),
                ]) + (page.nextCursor === null ? '' : `\nOlder records: aptix audit --cursor ${page.nextCursor}`),
          );
          return 0;
        } catch (error) {
          if (
            error instanceof SessionStoreError &&
            (error.code === 'INVALID_ARGUMENT' || error.code === 'VALUE_TOO_LONG')
          ) {
            out.fail(error.code, error.message);
            return 2;
          }
          throw error;
        }
      });
    });
}
