import { useState } from 'preact/hooks';
import { ApiError, headers, serverSentEvents } from '../api.js';
import { messageOf } from './common.js';

type Entry =
  | { kind: 'user' | 'assistant'; text: string }
  | { kind: 'tool'; name: string; arguments: string; output?: string; successful?: boolean; callId: string }
  | { kind: 'note'; text: string };

/** A chat in a session, streamed: text as it comes, each tool call and its result as it happens. */
export function ChatView({ sessionId }: { sessionId: string | undefined }) {
  const [id, setId] = useState(sessionId ?? '');
  const [input, setInput] = useState('');
  const [entries, setEntries] = useState<Entry[]>([]);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | undefined>(undefined);

  const send = async (event: Event) => {
    event.preventDefault();
    if (input.trim() === '' || busy) return;
    setProblem(undefined);
    setBusy(true);
    let session = id.trim();
    const log: Entry[] = [...entries, { kind: 'user', text: input }];
    setEntries(log);
    const message = input;
    setInput('');
    try {
      if (session === '') {
        const created = await fetch('/v1/sessions', {
          method: 'POST',
          headers: headers({ 'content-type': 'application/json' }),
          body: '{}',
        });
        if (!created.ok)
          throw new ApiError(created.status, 'SESSION_NOT_CREATED', 'The host did not create a session.', undefined);
        session = ((await created.json()) as { id: string }).id;
        setId(session);
      }
      const response = await fetch(`/v1/sessions/${encodeURIComponent(session)}/messages`, {
        method: 'POST',
        headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
        body: JSON.stringify({ input: message }),
      });
      if (!response.ok) {
        const body = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
        throw new ApiError(
          response.status,
          body.error?.code ?? `HTTP_${response.status}`,
          body.error?.message ?? `The host answered ${response.status}.`,
          body,
        );
      }
      let text = '';
      const current = [...log, { kind: 'assistant', text: '' } as Entry];
      const assistantAt = current.length - 1;
      for await (const { event: type, data } of serverSentEvents(response)) {
        const e = data as Record<string, unknown>;
        if (type === 'text_delta') {
          text += String(e.delta);
          current[assistantAt] = { kind: 'assistant', text };
        } else if (type === 'tool_call_started') {
          current.push({
            kind: 'tool',
            callId: String(e.callId),
            name: String(e.name),
            arguments: String(e.arguments),
          });
        } else if (type === 'tool_call_finished') {
          const at = current.findIndex((entry) => entry.kind === 'tool' && entry.callId === e.callId);
          if (at !== -1)
            current[at] = {
              ...(current[at] as Extract<Entry, { kind: 'tool' }>),
              output: String(e.output ?? ''),
              successful: e.successful === true,
            };
        } else if (type === 'mode_changed') {
          current.push({ kind: 'note', text: `Mode changed from ${String(e.fromMode)} to ${String(e.toMode)}.` });
        } else if (type === 'error') {
          setProblem(`${String(e.code)}: ${String(e.message)}`);
        }
        setEntries([...current]);
      }
    } catch (error) {
      setProblem(messageOf(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="chat-title">
      <h2 id="chat-title">Chat</h2>
      <label>
        Session id (empty: a new session)
        <input type="text" value={id} onInput={(event) => setId(event.currentTarget.value)} />
      </label>
      <ol class="chat" aria-live="polite" aria-label="Conversation">
        {entries.map((entry) =>
          entry.kind === 'tool' ? (
            <li class="tool-call" data-tool-call={entry.name}>
              <strong>Tool call</strong> <code>{entry.name}</code> <code>{entry.arguments}</code>
              {entry.output === undefined ? (
                <span class="muted"> running…</span>
              ) : (
                <pre class={entry.successful ? 'json' : 'json failed'}>{entry.output}</pre>
              )}
            </li>
          ) : entry.kind === 'note' ? (
            <li class="note">{entry.text}</li>
          ) : (
            <li class={entry.kind}>
              <strong>{entry.kind === 'user' ? 'You' : 'Assistant'}:</strong> {entry.text}
            </li>
          ),
        )}
      </ol>
      {problem ? (
        <p class="error" role="alert">
          {problem}
        </p>
      ) : null}
      <form onSubmit={(event) => void send(event)} class="row">
        <label for="chat-input">Message</label>
        <input
          id="chat-input"
          type="text"
          value={input}
          onInput={(event) => setInput(event.currentTarget.value)}
          disabled={busy}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Answering…' : 'Send'}
        </button>
      </form>
    </section>
  );
}
