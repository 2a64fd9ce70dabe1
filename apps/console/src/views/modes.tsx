import { api, type ModeView } from '../api.js';
import { ErrorNote, useLoad } from './common.js';

/** The mode catalog: each mode's tools and the guidance its sessions run with. */
export function ModesView() {
  const modes = useLoad(() => api<{ modes: ModeView[] }>('/v1/modes').then((r) => r.body.modes), []);
  const tools = useLoad(
    async () =>
      Object.fromEntries(
        await Promise.all(
          (modes.data ?? []).map(
            async (mode) =>
              [
                mode.key,
                (
                  await api<{ tools: Array<{ name: string }> }>(
                    `/v1/tools?format=mcp&mode=${encodeURIComponent(mode.key)}`,
                  )
                ).body.tools.map((t) => t.name),
              ] as const,
          ),
        ),
      ),
    [modes.data],
  );
  return (
    <section aria-labelledby="modes-title">
      <h2 id="modes-title">Modes</h2>
      <ErrorNote error={modes.error ?? tools.error} />
      {(modes.data ?? []).map((mode) => (
        <article key={mode.key} class="card" data-mode={mode.key}>
          <h3>
            {mode.displayName} <code>{mode.key}</code>
          </h3>
          <p>{mode.description}</p>
          {typeof mode.systemPromptSummary === 'string' ? (
            <>
              <h4>Guidance</h4>
              <p>{mode.systemPromptSummary}</p>
            </>
          ) : null}
          <h4>Tools</h4>
          <ul class="inline">
            {(tools.data?.[mode.key] ?? []).map((name) => (
              <li>
                <a href={`#/tools/${encodeURIComponent(name)}`}>
                  <code>{name}</code>
                </a>
              </li>
            ))}
          </ul>
        </article>
      ))}
    </section>
  );
}
