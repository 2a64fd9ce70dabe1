import { describe, expect, it } from 'vitest';
import { InvokeResult } from '../invoke-result.js';
import { describeMalformedResult } from './invoke-result-shape.js';

describe('describeMalformedResult', () => {
  it('accepts what InvokeResult builds', () => {
    expect(describeMalformedResult(InvokeResult.create('{"ok":true}'))).toBeUndefined();
    expect(describeMalformedResult(InvokeResult.fromError('No.', 'NOPE'))).toBeUndefined();
    expect(describeMalformedResult({ successful: false, result: null, errors: [{ message: 'No.' }] })).toBeUndefined();
  });

  it.each([
    [undefined, 'it is undefined, not an InvokeResult object'],
    ['{"ok":true}', 'it is the string "{\\"ok\\":true}", not an InvokeResult object'],
    [{ successful: 'yes', errors: [] }, '\'successful\' is the string "yes", not a boolean'],
    [{ successful: true, result: '{}' }, "'errors' is undefined, not an array"],
    [
      { successful: true, result: { ok: true }, errors: [] },
      "a successful result's 'result' is an object, not JSON text",
    ],
    [{ successful: true, result: 'ok', errors: [] }, "a successful result's 'result' is not valid JSON text: \"ok\""],
    [
      { successful: false, result: '{}', errors: [{ message: 'No.' }] },
      "a failed result's 'result' is the string \"{}\", not null",
    ],
    [
      { successful: false, result: null, errors: [] },
      'a failed result has no errors: a model cannot tell what went wrong',
    ],
    [
      { successful: false, result: null, errors: ['No.'] },
      'errors[0] is the string "No.", not an { message, code? } object',
    ],
    [{ successful: false, result: null, errors: [{ message: ' ' }] }, 'errors[0] has no message (got the string " ")'],
    [
      { successful: false, result: null, errors: [{ message: 'No.', code: 7 }] },
      'errors[0] has a code that is number 7, not a string',
    ],
    [
      { successful: false, result: null, errors: [{ message: 'Boom\n    at db.js:1:1' }] },
      'errors[0] leaks a stack trace in its message',
    ],
  ])('refuses %j: %s', (value, why) => {
    expect(describeMalformedResult(value)).toBe(why);
  });
});
