const STACK_FRAME = /\n\s+at\s/;

/**
 * Why `value` is not a well-formed InvokeResult as a tool must return it, or `undefined` when it is one.
 * Stricter than `InvokeResult.isInvokeResult`, which a host uses to accept what it can: here a success
 * carries JSON text, a failure carries `result: null` and at least one error with a message, and no
 * message leaks a stack trace (AGN-005 §4.3, §9).
 *
 * @example expect(describeMalformedResult(await tool.execute('[]', testContext()))).toBeUndefined();
 */
export function describeMalformedResult(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `it is ${describeValue(value)}, not an InvokeResult object`;
  const candidate = value as { successful?: unknown; result?: unknown; errors?: unknown };
  if (typeof candidate.successful !== 'boolean')
    return `'successful' is ${describeValue(candidate.successful)}, not a boolean`;
  if (!Array.isArray(candidate.errors)) return `'errors' is ${describeValue(candidate.errors)}, not an array`;
  for (const [index, error] of candidate.errors.entries()) {
    const problem = describeMalformedError(error);
    if (problem !== undefined) return `errors[${index}] ${problem}`;
  }
  if (candidate.successful) {
    if (typeof candidate.result !== 'string')
      return `a successful result's 'result' is ${describeValue(candidate.result)}, not JSON text`;
    try {
      JSON.parse(candidate.result);
    } catch {
      return `a successful result's 'result' is not valid JSON text: ${JSON.stringify(candidate.result.slice(0, 60))}`;
    }
    return undefined;
  }
  if (candidate.result !== null) return `a failed result's 'result' is ${describeValue(candidate.result)}, not null`;
  if (candidate.errors.length === 0) return 'a failed result has no errors: a model cannot tell what went wrong';
  return undefined;
}

function describeMalformedError(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object')
    return `is ${describeValue(error)}, not an { message, code? } object`;
  const { message, code } = error as { message?: unknown; code?: unknown };
  if (typeof message !== 'string' || message.trim() === '') return `has no message (got ${describeValue(message)})`;
  if (code !== undefined && typeof code !== 'string') return `has a code that is ${describeValue(code)}, not a string`;
  if (STACK_FRAME.test(message)) return 'leaks a stack trace in its message';
  return undefined;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
