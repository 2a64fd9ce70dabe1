import type { InvokeError } from './invoke-result.js';

/** At most this many errors of a failed result are kept. */
const MAX_ERRORS = 20;
const STACK_FRAME = /\n\s+at\s/;

/**
 * Keeps only well-formed errors, at most {@link MAX_ERRORS} of them, cuts any stack trace out of their
 * messages, and cuts a message (and a code) past the bound: a failure is still a failure, so it is sent
 * shortened rather than refused.
 */
export function cleanErrors(errors: readonly unknown[] | undefined, maxLength: number): InvokeError[] {
  const out: InvokeError[] = [];
  const list = Array.isArray(errors) ? errors : [];
  for (let i = 0; i < list.length && out.length < MAX_ERRORS; i++) {
    const error: unknown = list[i];
    if (error === null || typeof error !== 'object') continue;
    const { message, code } = error as { message?: unknown; code?: unknown };
    if (typeof message !== 'string' || message.trim() === '') continue;
    const frame = message.search(STACK_FRAME);
    const clean = frame === -1 ? message : message.slice(0, frame);
    const bounded =
      clean.length > maxLength
        ? `${clean.slice(0, maxLength)}… (cut: the message was ${clean.length} characters, over the limit of ${maxLength})`
        : clean;
    out.push(
      typeof code === 'string'
        ? { message: bounded, code: code.length > 128 ? code.slice(0, 128) : code }
        : { message: bounded },
    );
  }
  return out;
}
