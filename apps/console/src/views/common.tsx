import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.js';

/** Loads something once (again when `deps` change), with its error. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
): { data: T | undefined; error: string | undefined; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setError(undefined);
    load().then(
      (value) => live && setData(value),
      (failure: unknown) => live && setError(messageOf(failure)),
    );
    return () => {
      live = false;
    };
    // deps are the caller's, spread on purpose: load is a new closure on every render and is not one of them.
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((n) => n + 1) };
}

export function messageOf(failure: unknown): string {
  if (failure instanceof ApiError) return `${failure.code}: ${failure.message}`;
  return failure instanceof Error ? failure.message : String(failure);
}

export function ErrorNote({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" aria-label={label} tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/**
 * A usage guide, readably: lines ending in ":" become headings, "- " lines list items, the rest
 * paragraphs. Rendered as text nodes only: nothing in a guide can become markup.
 */
export function UsageGuide({ text }: { text: string }) {
  const blocks: Array<{ kind: 'h' | 'li' | 'p'; text: string }> = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (/^[A-Z][\w ()/-]*:$/.test(line)) blocks.push({ kind: 'h', text: line.slice(0, -1) });
    else if (line.startsWith('- ')) blocks.push({ kind: 'li', text: line.slice(2) });
    else blocks.push({ kind: 'p', text: line });
  }
  const out: preact.JSX.Element[] = [];
  let items: string[] = [];
  const flush = () => {
    if (items.length > 0)
      out.push(
        <ul>
          {items.map((item) => (
            <li>{item}</li>
          ))}
        </ul>,
      );
    items = [];
  };
  for (const block of blocks) {
    if (block.kind === 'li') {
      items.push(block.text);
      continue;
    }
    flush();
    out.push(block.kind === 'h' ? <h4>{block.text}</h4> : <p>{block.text}</p>);
  }
  flush();
  return <div class="usage">{out}</div>;
}
