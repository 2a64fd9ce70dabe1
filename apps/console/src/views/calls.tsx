import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, messageOf, useLoad } from './common.js';

/** One record of the host's audit trail (GET /v1/audit). */
export interface AuditRecord {
  readonly id: string;
  readonly at: string;
  readonly kind: 'tool_call' | 'approval_decision' | 'mode_change';
  readonly principal: string | null;
  readonly sessionId: string | null;
  readonly tool: string;
  readonly argumentsHash: string | null;
  readonly outcome: string;
  readonly durationMs: number | null;
  readonly traceId: string | null;
  readonly approvalId: string | null;
  readonly decision: 'approve' | 'deny' | null;
  readonly fromMode: string | null;
  readonly toMode: string | null;
}

interface AuditPage {
  readonly records: readonly AuditRecord[];
  readonly nextCursor: string | null;
}

const KINDS = [
  ['', 'Every kind'],
  ['tool_call', 'Tool calls'],
  ['approval_decision', 'Approval decisions'],
  ['mode_change', 'Mode changes'],
] as const;

const TEXT_FILTERS = [
  ['tool', 'Tool'],
  ['principal', 'Principal'],
  ['sessionId', 'Session'],
  ['outcome', 'Outcome'],
] as const;

type Filters = Record<'tool' | 'principal' | 'sessionId' | 'outcome' | 'kind' | 'since' | 'until', string>;
const NO_FILTERS: Filters = { tool: '', principal: '', sessionId: '', outcome: '', kind: '', since: '', until: '' };

/** The query of GET /v1/audit: the filters set, times as ISO-8601 (a datetime-local input gives local time). */
function query(filters: Filters, cursor?: string): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (value.trim() === '') continue;
    params.set(name, name === 'since' || name === 'until' ? new Date(value).toISOString() : value.trim());
  }
  params.set('limit', '50');
  if (cursor) params.set('cursor', cursor);
  return params.toString();
}

/** The calls the host recorded, newest first, filtered like GET /v1/audit; each opens its record. */
export function CallsView({ recordId }: { recordId: string | undefined }) {
  return recordId === undefined ? <CallList /> : <CallRecord id={recordId} />;
}

function CallList() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [older, setOlder] = useState<{ records: AuditRecord[]; cursor: string | null } | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const first = useLoad(() => api<AuditPage>(`/v1/audit?${query(filters)}`).then((r) => r.body), [filters]);
  const records = [...(first.data?.records ?? []), ...(older?.records ?? [])];
  const cursor = older === undefined ? (first.data?.nextCursor ?? null) : older.cursor;
  const more = async () => {
    setFailure(undefined);
    try {
      const page = (await api<AuditPage>(`/v1/audit?${query(filters, cursor!)}`)).body;
      setOlder({ records: [...(older?.records ?? []), ...page.records], cursor: page.nextCursor });
    } catch (error) {
      setFailure(messageOf(error));
    }
  };
  return (
    <section aria-labelledby="calls-title">
      <h2 id="calls-title">Calls</h2>
      <p class="muted">
        The audit trail: calls of tools that change something, approval decisions and mode changes, newest first.
      </p>
      <form
        class="filters"
        aria-label="Filter the calls"
        onSubmit={(event) => {
          event.preventDefault();
          setOlder(undefined);
          setFilters({ ...draft });
        }}
      >
        {TEXT_FILTERS.map(([name, label]) => (
          <label key={name}>
            {label}
            <input
              type="text"
              name={name}
              maxLength={name === 'outcome' ? 64 : 256}
              value={draft[name]}
              onInput={(event) => setDraft({ ...draft, [name]: event.currentTarget.value })}
            />
          </label>
        ))}
        <label>
          Kind
          <select value={draft.kind} onChange={(event) => setDraft({ ...draft, kind: event.currentTarget.value })}>
            {KINDS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Since
          <input
            type="datetime-local"
            value={draft.since}
            onInput={(event) => setDraft({ ...draft, since: event.currentTarget.value })}
          />
        </label>
        <label>
          Until
          <input
            type="datetime-local"
            value={draft.until}
            onInput={(event) => setDraft({ ...draft, until: event.currentTarget.value })}
          />
        </label>
        <button type="submit">Show calls</button>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setOlder(undefined);
            first.reload();
          }}
        >
          Refresh
        </button>
      </form>
      <ErrorNote error={first.error ?? failure} />
      {first.data !== undefined && records.length === 0 ? <p class="muted">No calls match.</p> : null}
      {records.length > 0 ? (
        <table class="calls">
          <caption>Recorded calls, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Tool</th>
              <th scope="col">Principal</th>
              <th scope="col">Session</th>
              <th scope="col">Outcome</th>
              <th scope="col">Duration</th>
              <th scope="col">Trace id</th>
            </tr>
          </thead>
          <tbody>
            {records.map((record) => (
              <tr key={record.id} data-call={record.id}>
                <td>{record.at}</td>
                <td>
                  <a
                    href={`#/calls/${encodeURIComponent(record.id)}`}
                    aria-label={`Record ${record.id}: ${record.tool}`}
                  >
                    <code>{record.tool}</code>
                  </a>
                  {record.kind === 'tool_call' ? null : <span class="badge">{kindLabel(record)}</span>}
                </td>
                <td>{record.principal ?? '—'}</td>
                <td>{record.sessionId ? <code>{record.sessionId}</code> : '—'}</td>
                <td>
                  <span class={record.outcome === 'OK' ? 'badge' : 'badge danger'}>{record.outcome}</span>
                </td>
                <td>{record.durationMs === null ? '—' : `${record.durationMs} ms`}</td>
                <td>{record.traceId ? <code>{record.traceId}</code> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {cursor !== null && records.length > 0 ? (
        <button type="button" class="secondary" onClick={() => void more()}>
          Older calls
        </button>
      ) : null}
    </section>
  );
}

function kindLabel(record: AuditRecord): string {
  if (record.kind === 'mode_change') return 'mode change';
  return record.decision === 'deny' ? 'denial' : 'decision';
}

/** One audit record, every field of it. */
function CallRecord({ id }: { id: string }) {
  const record = useLoad(() => api<AuditRecord>(`/v1/audit/${encodeURIComponent(id)}`).then((r) => r.body), [id]);
  const fields: Array<[string, string | number | null]> = record.data
    ? [
        ['When', record.data.at],
        ['Kind', record.data.kind],
        ['Tool', record.data.tool],
        ['Principal', record.data.principal],
        ['Session', record.data.sessionId],
        ['Outcome', record.data.outcome],
        ['Duration', record.data.durationMs === null ? null : `${record.data.durationMs} ms`],
        ['Trace id', record.data.traceId],
        ['Arguments (SHA-256)', record.data.argumentsHash],
        ['Approval', record.data.approvalId],
        ['Decision', record.data.decision],
        ['Mode left', record.data.fromMode],
        ['Mode entered', record.data.toMode],
      ]
    : [];
  return (
    <section aria-labelledby="call-title">
      <h2 id="call-title">Call record {id}</h2>
      <p>
        <a href="#/calls">Back to the calls</a>
      </p>
      <ErrorNote error={record.error} />
      {record.data ? (
        <dl class="record" data-record={record.data.id}>
          {fields.map(([label, value]) => (
            <div key={label}>
              <dt>{label}</dt>
              <dd>{value === null ? '—' : String(value)}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {record.data?.sessionId ? (
        <p>
          <a href={`#/sessions/${encodeURIComponent(record.data.sessionId)}`}>Open the session</a>
        </p>
      ) : null}
    </section>
  );
}
