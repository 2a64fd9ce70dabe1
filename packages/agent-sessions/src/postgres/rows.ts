/** The rows the PostgreSQL store's statements return, and how they become history. */
import type { QueryResultRow } from 'pg';
import type { ModeChange } from '../types.js';

const FOREIGN_KEY_VIOLATION = '23503';

export interface SessionJoinRow extends QueryResultRow {
  id: string;
  mode: string;
  org_id: string | null;
  user_id: string | null;
  parent_id: string | null;
  owner_id: string | null;
  created_at: Date;
  /** The session's highest history `seq` (0 without history), as text: a bigint. */
  last_seq: string;
  seq: string | null;
  from_mode: string | null;
  to_mode: string | null;
  reason: string | null;
  branch: boolean | null;
  change_org_id: string | null;
  change_user_id: string | null;
  changed_at: Date | null;
}

export function isForeignKeyViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION;
}

/** The history rows of a join (a session without newer rows gives one row of nulls). */
export function toChanges(rows: readonly SessionJoinRow[]): ModeChange[] {
  const history: ModeChange[] = [];
  for (const row of rows) {
    if (row.to_mode === null || row.from_mode === null || row.changed_at === null) continue;
    history.push({
      fromMode: row.from_mode,
      toMode: row.to_mode,
      reason: row.reason ?? '',
      branch: row.branch === true,
      org: row.change_org_id,
      user: row.change_user_id,
      at: row.changed_at.toISOString(),
    });
  }
  return history;
}

/** What a committed change statement returns: the new row, and the session it changed. */
export interface CommittedRow extends QueryResultRow {
  seq: string;
  changed_at: Date;
  from_mode: string;
  org_id: string | null;
  user_id: string | null;
  parent_id: string | null;
  owner_id: string | null;
  created_at: Date;
}
