import { userInfo } from 'node:os';
import type { Command } from 'commander';
import type { ApprovalStatus } from '@aptix/agent-sessions';
import type { AptixHost } from '../aptix-host.js';
import { approvalView } from '../approvals/present.js';
import { table, type Output } from './output.js';

type WithHost = (work: (host: AptixHost, out: Output) => Promise<number | void>) => Promise<void>;

const STATUSES = ['pending', 'approved', 'denied', 'expired', 'executing', 'executed', 'refused', 'outcome_unknown'];

/** Who decides from the command line: the operating-system user, marked as such. */
function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

/** `aptix approvals list | show | approve | deny`: the calls that wait for a person. */
export function registerApprovalCommands(program: Command, withHost: WithHost): void {
  const approvals = program.command('approvals').description('calls that wait for a person: list, show, approve, deny');

  approvals
    .command('list')
    .description('list approvals, newest first')
    .option('--session <id>', "only this session's")
    .option('--status <status>', `only those in this status (${STATUSES.join(', ')})`, 'pending')
    .option('--all', 'every status')
    .action(async (options: { session?: string; status: string; all?: boolean }) => {
      await withHost(async (host, out) => {
        if (!options.all && !STATUSES.includes(options.status)) {
          out.fail(
            'BAD_REQUEST',
            `--status "${options.status}" is not a status. Use one of ${STATUSES.join(', ')}, or --all.`,
          );
          return 2;
        }
        const list = await host.approvals().store.list({
          ...(options.session ? { sessionId: options.session } : {}),
          ...(options.all ? {} : { status: options.status as ApprovalStatus }),
        });
        out.print({ approvals: list.map(approvalView) }, () =>
          list.length === 0 ? 'No approvals.' : table(list.map((a) => [a.id, a.status, a.toolName, a.reason])),
        );
        return 0;
      });
    });

  approvals
    .command('show')
    .description('show one approval, with its result once the call ran')
    .argument('<id>')
    .action(async (id: string) => {
      await withHost(async (host, out) => {
        const approval = await host.approvals().store.get(id);
        if (approval === undefined) {
          out.fail('APPROVAL_NOT_FOUND', `Approval "${id}" does not exist. List them with \`aptix approvals list\`.`);
          return 1;
        }
        out.print(approvalView(approval));
        return 0;
      });
    });

  for (const decision of ['approve', 'deny'] as const) {
    approvals
      .command(decision)
      .description(
        decision === 'approve'
          ? 'approve a call: it runs once, here, and its result is printed'
          : 'deny a call: it never runs',
      )
      .argument('<id>')
      .option('--note <text>', 'why (a denial passes it on to the model)')
      .action(async (id: string, options: { note?: string }) => {
        await withHost(async (host, out) => {
          const outcome = await host.approvals().decide(id, decision, cliActor(), options.note ?? null);
          if (outcome.kind === 'not_found') {
            out.fail('APPROVAL_NOT_FOUND', `Approval "${id}" does not exist. List them with \`aptix approvals list\`.`);
            return 1;
          }
          if (outcome.kind === 'expired') {
            out.fail(
              'APPROVAL_EXPIRED',
              `Approval ${id} expired at ${outcome.approval.expiresAt} before anyone decided; the call did not run and will not.`,
            );
            return 1;
          }
          if (outcome.kind === 'already_decided') {
            out.fail(
              'APPROVAL_ALREADY_DECIDED',
              `Approval ${id} was already decided${outcome.approval.decidedBy ? ` by ${outcome.approval.decidedBy}` : ''}; it is now "${outcome.approval.status}". Nothing changed.`,
            );
            return 1;
          }
          // The CLI works on the store directly, as the operator; it names no principal, so this does not happen.
          if (outcome.kind === 'forbidden') {
            out.fail(outcome.code, outcome.message);
            return 1;
          }
          out.print(approvalView(outcome.approval));
          const result = outcome.approval.result as { successful?: boolean } | null;
          return decision === 'deny' || result?.successful === true ? 0 : 1;
        });
      });
  }
}
