import { useState } from 'preact/hooks';
import { api, type Approval } from '../api.js';
import { ErrorNote, Json, messageOf, useLoad } from './common.js';

/** The calls waiting for a person, with approve and deny; a decided call shows its outcome. */
export function ApprovalsView() {
  const [status, setStatus] = useState('pending');
  const list = useLoad(
    () =>
      api<{ approvals: Approval[] }>(`/v1/approvals${status ? `?status=${status}` : ''}`).then((r) => r.body.approvals),
    [status],
  );
  const [decided, setDecided] = useState<Approval | undefined>(undefined);
  return (
    <section aria-labelledby="approvals-title">
      <h2 id="approvals-title">Approvals</h2>
      <label>
        Show
        <select value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
          <option value="pending">Waiting for a decision</option>
          <option value="">Every approval</option>
        </select>
      </label>
      <button type="button" class="secondary" onClick={() => list.reload()}>
        Refresh
      </button>
      <ErrorNote error={list.error} />
      {decided ? (
        <div class="result" role="status" data-approval-result={decided.id}>
          <h3>
            {decided.toolName}: {decided.status}
          </h3>
          {decided.result ? <Json value={decided.result} label="The call's result" /> : null}
        </div>
      ) : null}
      {list.data?.length === 0 ? <p class="muted">Nothing waits for a decision.</p> : null}
      {(list.data ?? []).map((approval) => (
        <ApprovalCard
          key={approval.id}
          approval={approval}
          onDecided={(after) => {
            setDecided(after);
            list.reload();
          }}
        />
      ))}
    </section>
  );
}

function ApprovalCard({ approval, onDecided }: { approval: Approval; onDecided: (approval: Approval) => void }) {
  const [note, setNote] = useState('');
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const decide = async (decision: 'approve' | 'deny') => {
    setFailure(undefined);
    try {
      onDecided(
        (
          await api<Approval>(`/v1/approvals/${encodeURIComponent(approval.id)}`, {
            method: 'POST',
            body: { decision, ...(note ? { note } : {}) },
          })
        ).body,
      );
    } catch (error) {
      setFailure(messageOf(error));
    }
  };
  const noteId = `note-${approval.id}`;
  return (
    <article class="card" data-approval={approval.id} aria-label={`Approval for ${approval.toolName}`}>
      <h3>
        <code>{approval.toolName}</code> <span class="badge">{approval.status}</span>
      </h3>
      <p>{approval.reason}</p>
      <p class="muted">
        Asked {approval.requestedAt}
        {approval.requestedBy ? ` by ${approval.requestedBy}` : ''}; expires {approval.expiresAt}
        {approval.sessionId ? ` · session ${approval.sessionId}` : ''}
      </p>
      <Json value={approval.arguments} label="The arguments that run if approved" />
      {approval.status === 'pending' ? (
        <div class="row">
          <label for={noteId}>Note (optional)</label>
          <input id={noteId} type="text" value={note} onInput={(event) => setNote(event.currentTarget.value)} />
          <button type="button" onClick={() => void decide('approve')}>
            Approve
          </button>
          <button type="button" class="danger" onClick={() => void decide('deny')}>
            Deny
          </button>
        </div>
      ) : approval.result ? (
        <Json value={approval.result} label="The call's result" />
      ) : null}
      <ErrorNote error={failure} />
    </article>
  );
}
