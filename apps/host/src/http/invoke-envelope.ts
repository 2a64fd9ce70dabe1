import type { InvokeResult } from '@aptix/tool-contract';

/**
 * The body of a call's answer, `{ successful, result, errors, content? }`, as the JSON reply and the
 * event stream's `result` event both carry it. The result is already JSON text (the executor checked
 * it): it is spliced in rather than parsed and serialised again.
 */
export function invokeEnvelope(result: InvokeResult<string>): string {
  if (!result.successful) return JSON.stringify({ successful: false, result: null, errors: result.errors });
  const content = result.content !== undefined ? `,"content":${JSON.stringify(result.content)}` : '';
  return `{"successful":true,"result":${result.result},"errors":[]${content}}`;
}
