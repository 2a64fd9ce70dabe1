import { useState } from 'preact/hooks';
import { api, type ModeView, type PackageView, type ToolDetail, type ToolSummary } from '../api.js';
import { ErrorNote, Json, UsageGuide, useLoad } from './common.js';

/** Every tool the host serves, filtered by mode and package; one tool's whole contract beside the list. */
export function ToolsView({ selected }: { selected: string | undefined }) {
  const [mode, setMode] = useState('');
  const [pkg, setPkg] = useState('');
  const modes = useLoad(() => api<{ modes: ModeView[] }>('/v1/modes').then((r) => r.body.modes), []);
  const packages = useLoad(() => api<{ packages: PackageView[] }>('/v1/packages').then((r) => r.body.packages), []);
  const tools = useLoad(
    () =>
      api<{ tools: ToolSummary[]; approvals: Record<string, string> }>(
        `/v1/tools?format=mcp${mode ? `&mode=${encodeURIComponent(mode)}` : ''}`,
      ).then((r) => r.body),
    [mode],
  );
  const inPackage = (name: string) =>
    pkg === '' || (packages.data?.find((p) => p.name === pkg)?.tools.includes(name) ?? false);
  const shown = (tools.data?.tools ?? []).filter((tool) => inPackage(tool.name));
  return (
    <div class="split">
      <section aria-labelledby="tools-title">
        <h2 id="tools-title">Tools</h2>
        <div class="filters">
          <label for="filter-mode">Mode</label>
          <select id="filter-mode" value={mode} onChange={(event) => setMode(event.currentTarget.value)}>
            <option value="">Every mode</option>
            {(modes.data ?? []).map((m) => (
              <option value={m.key}>
                {m.displayName} ({m.key})
              </option>
            ))}
          </select>
          <label for="filter-package">Package</label>
          <select id="filter-package" value={pkg} onChange={(event) => setPkg(event.currentTarget.value)}>
            <option value="">Every package</option>
            {(packages.data ?? []).map((p) => (
              <option value={p.name}>{p.name}</option>
            ))}
          </select>
        </div>
        <ErrorNote error={tools.error ?? modes.error ?? packages.error} />
        <ul class="tool-list" aria-label="Tools shown">
          {shown.map((tool) => (
            <li key={tool.name} data-tool={tool.name}>
              <a
                href={`#/tools/${encodeURIComponent(tool.name)}`}
                aria-current={selected === tool.name ? 'true' : undefined}
              >
                <code>{tool.name}</code>
              </a>
              {tools.data?.approvals[tool.name] ? (
                <span class="badge">approval: {tools.data.approvals[tool.name]}</span>
              ) : null}
              <span class="muted"> {tool.description}</span>
            </li>
          ))}
        </ul>
        {tools.data ? (
          <p class="muted">
            {shown.length} of {tools.data.tools.length} tools shown.
          </p>
        ) : null}
      </section>
      {selected ? <ToolPanel name={selected} /> : <p class="muted">Choose a tool to see its schema and usage guide.</p>}
    </div>
  );
}

function ToolPanel({ name }: { name: string }) {
  const tool = useLoad(() => api<ToolDetail>(`/v1/tools/${encodeURIComponent(name)}`).then((r) => r.body), [name]);
  if (tool.error) return <ErrorNote error={tool.error} />;
  const t = tool.data;
  if (t === undefined) return <p aria-busy="true">Loading {name}…</p>;
  return (
    <section aria-labelledby="tool-title" class="panel">
      <h2 id="tool-title">
        <code>{t.name}</code>
      </h2>
      <p>{t.description}</p>
      <p>
        <a class="button" href={`#/try/${encodeURIComponent(t.name)}`}>
          Try {t.name}
        </a>
      </p>
      <dl>
        <dt>Package</dt>
        <dd>{t.package ?? 'unknown'}</dd>
        <dt>Strict mode</dt>
        <dd>
          {t.strict ? 'yes' : 'no'}
          {t.strictReport.declared ? ' (declared by the tool)' : ''}
          {t.strictReport.problems.length > 0 ? (
            <ul>
              {t.strictReport.problems.map((problem) => (
                <li>{problem}</li>
              ))}
            </ul>
          ) : null}
        </dd>
        <dt>Approval</dt>
        <dd>
          {t.approval === 'never'
            ? 'never needed'
            : t.approval === 'always'
              ? 'every call waits for a person'
              : 'depends on the arguments'}
        </dd>
        <dt>Annotations</dt>
        <dd>
          {Object.keys(t.annotations).length === 0
            ? 'none'
            : Object.entries(t.annotations)
                .map(([key, value]) => `${key}: ${String(value)}`)
                .join(', ')}
        </dd>
      </dl>
      <h3>Usage guide</h3>
      <UsageGuide text={t.usageMetadata} />
      <h3>Parameters</h3>
      <Json value={t.parameters} label={`Parameters schema of ${t.name}`} />
    </section>
  );
}
