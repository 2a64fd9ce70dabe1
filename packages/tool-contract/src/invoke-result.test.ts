import { describe, expect, it } from 'vitest';
import { InvokeResult } from './invoke-result.js';

describe('InvokeResult', () => {
  it('create gives a successful result with the value and no errors', () => {
    expect(InvokeResult.create('{"a":1}')).toEqual({ successful: true, result: '{"a":1}', errors: [] });
  });

  it('fromError gives a failed result with the message and the code', () => {
    expect(InvokeResult.fromError('nope', 'NOPE')).toEqual({
      successful: false,
      result: null,
      errors: [{ message: 'nope', code: 'NOPE' }],
    });
    expect(InvokeResult.fromError('nope').errors).toEqual([{ message: 'nope' }]);
  });

  it('recognises results by their shape, whoever built them', () => {
    expect(InvokeResult.isInvokeResult({ successful: true, result: 'x', errors: [] })).toBe(true);
    expect(InvokeResult.isInvokeResult({ successful: false, errors: [{ message: 'm' }] })).toBe(true);
    expect(InvokeResult.isInvokeResult({ successful: 'yes' })).toBe(false);
    expect(InvokeResult.isInvokeResult(null)).toBe(false);
    expect(InvokeResult.isInvokeResult('{"successful":true}')).toBe(false);
  });

  it('serialises to exactly { successful, result, errors }', () => {
    expect(JSON.parse(JSON.stringify(InvokeResult.fromError('m', 'C')))).toEqual({
      successful: false,
      result: null,
      errors: [{ message: 'm', code: 'C' }],
    });
  });
});
