import { useState } from 'preact/hooks';
import { api, ApiError, type InvokeResult, type ToolDetail, type ToolSummary } from '../api.js';
import { ErrorNote, Json, messageOf, useLoad } from './common.js';
import { argumentsOf, fieldsOf, problemsByField, type Field } from './schema-form.js';

/** A form made from a tool's schema (or raw JSON), run optionally in a session, and the InvokeResult. */
export function TryView({ toolName }: { toolName: string | undefined }) {
  const tools = useLoad(() => api<{ tools: ToolSummary[] }>('/v1/tools?format=mcp').then((r) => r.body.tools), []);
  return (
    <section aria-labelledby="try-title">
      <h2 id="try-title">Try a tool</h2>
      <ErrorNote error={tools.error} />
      <label>
        Tool
        <select
          value={toolName ?? ''}
          onChange={(event) => (window.location.hash = `#/try/${encodeURIComponent(event.currentTarget.value)}`)}
        >
          <option value="">Choose a tool…</option>
          {(tools.data ?? []).map((tool) => (
            <option value={tool.name}>{tool.name}</option>
          ))}
        </select>
      </label>
      {toolName ? <ToolForm key={toolName} name={toolName} /> : null}
    </section>
  );
}

function ToolForm({ name }: { name: string }) {
  const tool = useLoad(() => api<ToolDetail>(`/v1/tools/${encodeURIComponent(name)}`).then((r) => r.body), [name]);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [raw, setRaw] = useState<string | undefined>(undefined);
  const [sessionId, setSessionId] = useState('');
  const [answer, setAnswer] = useState<{ status: number; body: unknown } | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const [running, setRunning] = useState(false);
  if (tool.error) return <ErrorNote error={tool.error} />;
  if (tool.data === undefined) return <p aria-busy="true">Loading {name}…</p>;
  const fields = fieldsOf(tool.data.parameters);
  const result = answer?.body as InvokeResult | undefined;
  const invalid =
    result && !result.successful && result.errors[0]?.code === 'INVALID_ARGUMENTS'
      ? problemsByField(result.errors[0].message, fields)
      : undefined;

  const run = async (event: Event) => {
    event.preventDefault();
    setRunning(true);
    setFailure(undefined);
    setAnswer(undefined);
    try {
      let args: unknown;
      if (raw === undefined) args = argumentsOf(fields, values);
      else {
        try {
          args = JSON.parse(raw);
        } catch (error) {
          throw new Error(`The raw arguments are not JSON: ${(error as Error).message}`);
        }
      }
      const body = { arguments: args, ...(sessionId.trim() ? { context: { sessionId: sessionId.trim() } } : {}) };
      setAnswer(await api(`/v1/tools/${encodeURIComponent(name)}/invoke`, { method: 'POST', body }));
    } catch (error) {
      setFailure(error instanceof ApiError ? messageOf(error) : (error as Error).message);
    } finally {
      setRunning(false);
    }
  };

  return (
    <form onSubmit={(event) => void run(event)} class="panel" aria-labelledby="form-title">
      <h3 id="form-title">
        <code>{name}</code>
      </h3>
      <p class="muted">{tool.data.description}</p>
      <p>
        <button
          type="button"
          class="secondary"
          aria-pressed={raw !== undefined}
          onClick={() => setRaw(raw === undefined ? JSON.stringify(argumentsOf(fields, values), null, 2) : undefined)}
        >
          {raw === undefined ? 'Edit as raw JSON' : 'Back to the form'}
        </button>
      </p>
      {raw === undefined ? (
        fields.map((field) => (
          <FieldInput
            key={field.name}
            field={field}
            value={values[field.name]}
            problems={invalid?.byField[field.name]}
            onChange={(value) => setValues({ ...values, [field.name]: value })}
          />
        ))
      ) : (
        <label>
          Arguments (JSON)
          <textarea rows={8} value={raw} onInput={(event) => setRaw(event.currentTarget.value)} />
        </label>
      )}
      <label>
        Session id (optional: run in that session's mode)
        <input type="text" value={sessionId} onInput={(event) => setSessionId(event.currentTarget.value)} />
      </label>
      <button type="submit" disabled={running}>
        {running ? 'Running…' : `Run ${name}`}
      </button>
      <ErrorNote error={failure} />
      {invalid && invalid.other.length > 0 ? <ErrorNote error={invalid.other.join('; ')} /> : null}
      {answer ? (
        <div class="result" data-status={answer.status}>
          <h4>{answer.status === 202 ? 'Waiting for approval' : result?.successful ? 'Result' : 'Failed'}</h4>
          {answer.status === 202 ? (
            <p>
              {(answer.body as { message: string }).message} <a href="#/approvals">Open the approvals</a>.
            </p>
          ) : null}
          <Json value={answer.body} label="InvokeResult" />
        </div>
      ) : null}
    </form>
  );
}

function FieldInput({
  field,
  value,
  problems,
  onChange,
}: {
  field: Field;
  value: string | boolean | undefined;
  problems: string[] | undefined;
  onChange: (value: string | boolean) => void;
}) {
  const id = `field-${field.name}`;
  const errorId = `${id}-error`;
  const described =
    [field.description ? `${id}-help` : '', problems ? errorId : ''].filter(Boolean).join(' ') || undefined;
  const common = { id, 'aria-describedby': described, 'aria-invalid': problems ? true : undefined };
  let input;
  if (field.kind === 'boolean')
    input = (
      <input
        {...common}
        type="checkbox"
        checked={value === true}
        onChange={(event) => onChange(event.currentTarget.checked)}
      />
    );
  else if (field.kind === 'enum')
    input = (
      <select {...common} value={String(value ?? '')} onChange={(event) => onChange(event.currentTarget.value)}>
        <option value="">{field.required ? 'Choose…' : '(not sent)'}</option>
        {field.options.map((option) => (
          <option value={option}>{option}</option>
        ))}
      </select>
    );
  else if (field.kind === 'json')
    input = (
      <textarea
        {...common}
        rows={3}
        value={String(value ?? '')}
        onInput={(event) => onChange(event.currentTarget.value)}
      />
    );
  else
    input = (
      <input
        {...common}
        type="text"
        inputMode={field.kind === 'text' ? undefined : 'decimal'}
        value={String(value ?? '')}
        onInput={(event) => onChange(event.currentTarget.value)}
      />
    );
  return (
    <div class={`field${problems ? ' invalid' : ''}`} data-field={field.name}>
      <label for={id}>
        {field.name}
        {field.required ? null : <span class="muted"> (optional)</span>}
        {field.kind === 'number' || field.kind === 'integer' ? <span class="muted"> {field.kind}</span> : null}
      </label>
      {input}
      {field.description ? (
        <small id={`${id}-help`} class="muted">
          {field.description}
        </small>
      ) : null}
      {problems ? (
        <p id={errorId} class="field-error" role="alert">
          {problems.join('; ')}
        </p>
      ) : null}
    </div>
  );
}
