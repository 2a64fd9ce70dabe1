import { useState } from 'preact/hooks';
import { api, type InvokeResult, type ModeView, type SessionPage } from '../api.js';
import { ErrorNote, Json, messageOf, useLoad } from './common.js';

/** Open a session by id, page its history, create one, change its mode, see its tools. */
export function SessionsView({ sessionId }: { sessionId: string | undefined }) {
  const [id, setId] = useState(sessionId ?? '');
  const [newMode, setNewMode] = useState('');
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const modes = useLoad(() => api<{ modes: ModeView[] }>('/v1/modes').then((r) => r.body.modes), []);
  const create = async () => {
    setFailure(undefined);
    try {
      const created = await api<{ id: string }>('/v1/sessions', {
        method: 'POST',
        body: newMode ? { mode: newMode } : {},
      });
      window.location.hash = `#/sessions/${encodeURIComponent(created.body.id)}`;
    } catch (error) {
      setFailure(messageOf(error));
    }
  };
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <div class="row">
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (id.trim()) window.location.hash = `#/sessions/${encodeURIComponent(id.trim())}`;
          }}
        >
          <label>
            Session id
            <input type="text" value={id} onInput={(event) => setId(event.currentTarget.value)} />
          </label>
          <button type="submit">Open</button>
        </form>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void create();
          }}
        >
          <label>
            Starting mode
            <select value={newMode} onChange={(event) => setNewMode(event.currentTarget.value)}>
              <option value="">The catalog's default</option>
              {(modes.data ?? []).map((mode) => (
                <option value={mode.key}>{mode.displayName}</option>
              ))}
            </select>
          </label>
          <button type="submit">Create a session</button>
        </form>
      </div>
      <ErrorNote error={failure ?? modes.error} />
      {sessionId ? <SessionPanel key={sessionId} id={sessionId} modes={modes.data ?? []} /> : null}
    </section>
  );
}

function SessionPanel({ id, modes }: { id: string; modes: readonly ModeView[] }) {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const session = useLoad(
    () =>
      api<SessionPage>(
        `/v1/sessions/${encodeURIComponent(id)}?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ).then((r) => r.body),
    [id, cursor],
  );
  const tools = useLoad(
    () =>
      api<{ tools: Array<{ name: string }> }>(`/v1/tools?format=mcp&sessionId=${encodeURIComponent(id)}`).then((r) =>
        r.body.tools.map((t) => t.name),
      ),
    [id, session.data?.mode],
  );
  const [toMode, setToMode] = useState('');
  const [reason, setReason] = useState('');
  const [change, setChange] = useState<InvokeResult | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  if (session.error) return <ErrorNote error={session.error} />;
  const s = session.data;
  if (s === undefined) return <p aria-busy="true">Loading session {id}…</p>;
  const changeMode = async (event: Event) => {
    event.preventDefault();
    setFailure(undefined);
    try {
      const answer = await api<InvokeResult>('/v1/tools/agent_change_mode/invoke', {
        method: 'POST',
        body: { arguments: { mode: toMode, reason, branch: false }, context: { sessionId: id } },
      });
      setChange(answer.body);
      setCursor(undefined);
      session.reload();
    } catch (error) {
      setFailure(messageOf(error));
    }
  };
  return (
    <article class="panel" aria-labelledby="session-title">
      <h3 id="session-title">
        Session <code>{s.id}</code>
      </h3>
      <p>
        Mode: <strong data-session-mode>{s.mode}</strong> ·{' '}
        <a href={`#/chat/${encodeURIComponent(s.id)}`}>Chat in this session</a>
      </p>
      <h4>Tools offered now</h4>
      <ul class="inline" aria-label="Tools offered in this session">
        {(tools.data ?? []).map((name) => (
          <li>
            <code>{name}</code>
          </li>
        ))}
      </ul>
      <form onSubmit={(event) => void changeMode(event)} aria-labelledby="change-title">
        <h4 id="change-title">Change its mode</h4>
        <label>
          New mode
          <select value={toMode} onChange={(event) => setToMode(event.currentTarget.value)} required>
            <option value="">Choose…</option>
            {modes.map((mode) => (
              <option value={mode.key}>{mode.displayName}</option>
            ))}
          </select>
        </label>
        <label>
          Reason
          <input type="text" value={reason} onInput={(event) => setReason(event.currentTarget.value)} required />
        </label>
        <button type="submit">Change mode</button>
      </form>
      <ErrorNote error={failure} />
      {change && !change.successful ? <ErrorNote error={change.errors.map((e) => e.message).join(' ')} /> : null}
      <h4>Mode history</h4>
      {s.history.length === 0 ? (
        <p class="muted">No mode changes yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">From</th>
              <th scope="col">To</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {s.history.map((row) => (
              <tr>
                <td>{row.at}</td>
                <td>{row.fromMode}</td>
                <td>{row.toMode}</td>
                <td>{row.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {s.nextCursor ? (
        <button type="button" class="secondary" onClick={() => setCursor(s.nextCursor ?? undefined)}>
          Next page
        </button>
      ) : null}
      {cursor ? (
        <button type="button" class="secondary" onClick={() => setCursor(undefined)}>
          First page
        </button>
      ) : null}
      <details>
        <summary>Raw</summary>
        <Json value={s} label="Session as the API returns it" />
      </details>
    </article>
  );
}
