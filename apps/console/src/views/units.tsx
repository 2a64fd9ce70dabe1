import { useState } from 'preact/hooks';
import { api, type ModeView } from '../api.js';
import { ErrorNote, Json, messageOf, useLoad } from './common.js';

interface PromptListing {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly arguments: ReadonlyArray<{ name: string; description: string; required: boolean }>;
}
interface PromptMessage {
  readonly role: 'user' | 'assistant';
  readonly content: { readonly type: string; readonly text?: string } & Record<string, unknown>;
}
interface ResourceListing {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType: string;
}
interface TemplateListing extends Omit<ResourceListing, 'uri'> {
  readonly uriTemplate: string;
}
interface ResourceContents {
  readonly uri: string;
  readonly mimeType?: string;
  readonly text?: string;
  readonly blob?: string;
}

/** The mode filter both views share: a mode's sessions see their own prompts and resources. */
function ModeFilter({ id, mode, onChange }: { id: string; mode: string; onChange: (mode: string) => void }) {
  const modes = useLoad(() => api<{ modes: ModeView[] }>('/v1/modes').then((r) => r.body.modes), []);
  return (
    <div class="filters">
      <label for={id}>Mode</label>
      <select id={id} value={mode} onChange={(event) => onChange(event.currentTarget.value)}>
        <option value="">The default mode</option>
        {(modes.data ?? []).map((m) => (
          <option value={m.key}>
            {m.displayName} ({m.key})
          </option>
        ))}
      </select>
    </div>
  );
}

const inMode = (mode: string) => (mode ? `?mode=${encodeURIComponent(mode)}` : '');

/** One prompt: its arguments as a form, and the messages it renders to. */
function PromptCard({ prompt, mode }: { prompt: PromptListing; mode: string }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [messages, setMessages] = useState<readonly PromptMessage[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const render = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      const given = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== ''));
      const { body } = await api<{ messages: PromptMessage[] }>(
        `/v1/prompts/${encodeURIComponent(prompt.name)}${inMode(mode)}`,
        { method: 'POST', body: { arguments: given } },
      );
      setMessages(body.messages);
    } catch (failure) {
      setMessages(undefined);
      setError(messageOf(failure));
    }
  };
  return (
    <article class="card" data-prompt={prompt.name}>
      <h3>
        {prompt.title === undefined ? null : `${prompt.title} `}
        <code>{prompt.name}</code>
      </h3>
      <p>{prompt.description}</p>
      <form onSubmit={(event) => void render(event)}>
        {prompt.arguments.map((argument) => (
          <div class="field" key={argument.name}>
            <label for={`${prompt.name}-${argument.name}`}>
              {argument.name}
              {argument.required ? null : <span class="muted"> (optional)</span>}
            </label>
            <input
              id={`${prompt.name}-${argument.name}`}
              value={values[argument.name] ?? ''}
              onInput={(event) => setValues({ ...values, [argument.name]: event.currentTarget.value })}
            />
            <small class="muted">{argument.description}</small>
          </div>
        ))}
        <button type="submit">Render {prompt.name}</button>
      </form>
      <ErrorNote error={error} />
      {messages === undefined ? null : (
        <ol class="messages" aria-label={`Messages of ${prompt.name}`}>
          {messages.map((message, index) => (
            <li key={index} data-role={message.role}>
              <strong>{message.role}</strong>
              {message.content.type === 'text' ? (
                <pre class="json" tabIndex={0}>
                  {message.content.text}
                </pre>
              ) : (
                <Json value={message.content} label={`Message ${index + 1}`} />
              )}
            </li>
          ))}
        </ol>
      )}
    </article>
  );
}

/** The prompts a mode's sessions see (clients show them as slash commands), each rendered on demand. */
export function PromptsView() {
  const [mode, setMode] = useState('');
  const prompts = useLoad(
    () => api<{ mode: string; prompts: PromptListing[] }>(`/v1/prompts${inMode(mode)}`).then((r) => r.body),
    [mode],
  );
  return (
    <section aria-labelledby="prompts-title">
      <h2 id="prompts-title">Prompts</h2>
      <ModeFilter id="prompts-mode" mode={mode} onChange={setMode} />
      <ErrorNote error={prompts.error} />
      {prompts.data?.prompts.length === 0 ? <p>No prompts in this mode.</p> : null}
      {(prompts.data?.prompts ?? []).map((prompt) => (
        <PromptCard key={`${mode}/${prompt.name}`} prompt={prompt} mode={mode} />
      ))}
    </section>
  );
}

/** The resources and resource templates a mode's sessions see; any URI, a template's included, can be read. */
export function ResourcesView() {
  const [mode, setMode] = useState('');
  const [uri, setUri] = useState('');
  const [contents, setContents] = useState<readonly ResourceContents[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const listing = useLoad(
    () =>
      api<{ mode: string; resources: ResourceListing[]; templates: TemplateListing[] }>(
        `/v1/resources${inMode(mode)}`,
      ).then((r) => r.body),
    [mode],
  );
  const read = async (target: string) => {
    setUri(target);
    setError(undefined);
    try {
      const query = new URLSearchParams({ uri: target, ...(mode ? { mode } : {}) });
      setContents((await api<{ contents: ResourceContents[] }>(`/v1/resources/read?${query}`)).body.contents);
    } catch (failure) {
      setContents(undefined);
      setError(messageOf(failure));
    }
  };
  return (
    <div class="split">
      <section aria-labelledby="resources-title">
        <h2 id="resources-title">Resources</h2>
        <ModeFilter id="resources-mode" mode={mode} onChange={setMode} />
        <ErrorNote error={listing.error} />
        <ul class="tool-list" aria-label="Resources">
          {(listing.data?.resources ?? []).map((resource) => (
            <li key={resource.uri} data-resource={resource.uri}>
              <button type="button" class="secondary" onClick={() => void read(resource.uri)}>
                Read
              </button>{' '}
              <code>{resource.uri}</code>
              <span class="muted">
                {' '}
                {resource.title ?? resource.name} ({resource.mimeType})
              </span>
            </li>
          ))}
        </ul>
        {(listing.data?.templates.length ?? 0) === 0 ? null : (
          <>
            <h3>Templates</h3>
            <ul class="tool-list" aria-label="Resource templates">
              {listing.data!.templates.map((template) => (
                <li key={template.uriTemplate} data-template={template.uriTemplate}>
                  <code>{template.uriTemplate}</code>
                  <span class="muted"> {template.description ?? template.name}</span>
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
      <section aria-labelledby="read-title">
        <h2 id="read-title">Read a resource</h2>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (uri.trim() !== '') void read(uri.trim());
          }}
        >
          <label for="resource-uri">URI</label>
          <input id="resource-uri" value={uri} onInput={(event) => setUri(event.currentTarget.value)} />
          <button type="submit">Read</button>
        </form>
        <ErrorNote error={error} />
        {(contents ?? []).map((content) => (
          <article class="card" key={content.uri} data-contents={content.uri}>
            <h3>
              <code>{content.uri}</code> <span class="muted">{content.mimeType}</span>
            </h3>
            {content.text === undefined ? (
              <p>Binary, {Math.floor(((content.blob ?? '').length * 3) / 4)} bytes.</p>
            ) : (
              <pre class="json" tabIndex={0}>
                {content.text}
              </pre>
            )}
          </article>
        ))}
      </section>
    </div>
  );
}
