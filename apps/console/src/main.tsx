import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, apiKey, onUnauthorized, type PrincipalView } from './api.js';
import { AccessView } from './views/access.js';
import { ApprovalsView } from './views/approvals.js';
import { CallsView } from './views/calls.js';
import { ChatView } from './views/chat.js';
import { ModesView } from './views/modes.js';
import { SessionsView } from './views/sessions.js';
import { ToolsView } from './views/tools.js';
import { TryView } from './views/try.js';
import { PromptsView, ResourcesView } from './views/units.js';
import { useLoad } from './views/common.js';

/** The views, and which principals they are for: the console shows what the signed-in principal may do, and nothing else (the host refuses the rest all the same). */
const VIEWS: ReadonlyArray<{ path: string; label: string; for?: (principal: PrincipalView) => boolean }> = [
  { path: 'tools', label: 'Tools' },
  { path: 'try', label: 'Try a tool' },
  { path: 'modes', label: 'Modes' },
  { path: 'prompts', label: 'Prompts' },
  { path: 'resources', label: 'Resources' },
  { path: 'sessions', label: 'Sessions' },
  { path: 'approvals', label: 'Approvals', for: (principal) => principal.admin || principal.approve.length > 0 },
  { path: 'calls', label: 'Calls', for: (principal) => principal.admin },
  { path: 'chat', label: 'Chat' },
  { path: 'access', label: 'Your access' },
];

/** `#/try/testing_calculator` → ['try', 'testing_calculator']. */
function useRoute(): [string, string | undefined] {
  const read = () => {
    const [view = 'tools', arg] = window.location.hash.replace(/^#\/?/, '').split('/');
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    return [view, arg === undefined ? undefined : decodeURIComponent(arg)] as [string, string | undefined];
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = () => setRoute(read());
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** Asks for the API key when the host requires one; keeps it for this tab only. */
function KeyDialog({ onDone }: { onDone: () => void }) {
  const [value, setValue] = useState('');
  return (
    <section class="key-dialog" aria-labelledby="key-title">
      <h2 id="key-title">This host requires an API key</h2>
      <p>It is kept only in this browser tab and sent as a bearer token with each request.</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (value.trim() === '') return;
          apiKey.set(value.trim());
          onDone();
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
          autoFocus
        />
        <button type="submit">Use this key</button>
      </form>
    </section>
  );
}

function App() {
  const [view, arg] = useRoute();
  const [needKey, setNeedKey] = useState(false);
  const [generation, setGeneration] = useState(0);
  useEffect(() => onUnauthorized(() => setNeedKey(true)), []);
  const principal = useLoad(() => api<PrincipalView>('/v1/principal').then((r) => r.body), [generation]);
  const body = (() => {
    switch (view) {
      case 'try':
        return <TryView toolName={arg} />;
      case 'modes':
        return <ModesView />;
      case 'prompts':
        return <PromptsView />;
      case 'resources':
        return <ResourcesView />;
      case 'sessions':
        return <SessionsView sessionId={arg} />;
      case 'approvals':
        return <ApprovalsView />;
      case 'calls':
        return <CallsView recordId={arg} />;
      case 'chat':
        return <ChatView sessionId={arg} />;
      case 'access':
        return <AccessView principal={principal.data} error={principal.error} />;
      default:
        return <ToolsView selected={arg} />;
    }
  })();
  return (
    <>
      <header>
        <h1>Aptix console</h1>
        <nav aria-label="Views">
          <ul>
            {VIEWS.filter(
              (entry) => entry.for === undefined || principal.data === undefined || entry.for(principal.data),
            ).map((entry) => (
              <li key={entry.path}>
                <a
                  href={`#/${entry.path}`}
                  aria-current={view === entry.path || (view === '' && entry.path === 'tools') ? 'page' : undefined}
                >
                  {entry.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {apiKey.get() ? (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              apiKey.clear();
              setGeneration((n) => n + 1);
            }}
          >
            Forget the API key
          </button>
        ) : null}
      </header>
      <main key={generation}>
        {needKey ? (
          <KeyDialog
            onDone={() => {
              setNeedKey(false);
              setGeneration((n) => n + 1);
            }}
          />
        ) : (
          body
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
