import { describe, expect, it } from 'vitest';
import { ContractErrorCode, ExecutionErrorCode } from './errors.js';

describe('the codes registry', () => {
  it('spells every code as its own key, so a code is never a typo away from another', () => {
    for (const [key, value] of [...Object.entries(ContractErrorCode), ...Object.entries(ExecutionErrorCode)])
      expect(value).toBe(key);
  });

  it('never uses one code for both a contract violation and a failed call', () => {
    const contract = new Set<string>(Object.values(ContractErrorCode));
    expect(Object.values(ExecutionErrorCode).filter((code) => contract.has(code))).toEqual([]);
  });

  it('keeps every code a caller may already branch on, and the bounds added for fault isolation', () => {
    expect(Object.values(ExecutionErrorCode).sort()).toEqual(
      [
        'APPROVAL_DENIED',
        'APPROVAL_EXPIRED',
        'INPUT_REQUIRED',
        'INVALID_ARGUMENTS',
        'MALFORMED_RESULT',
        'OUTCOME_UNKNOWN',
        'OUTPUT_SCHEMA_MISMATCH',
        'PROCESS_EXIT_REFUSED',
        'RESOURCE_LIMIT',
        'RESULT_TOO_LARGE',
        'ROOTS_UNAVAILABLE',
        'SAMPLING_UNAVAILABLE',
        'TIMEOUT',
        'TOOL_EXCEPTION',
        'TOOL_NOT_FOUND',
        'TOOL_UNAVAILABLE',
      ].sort(),
    );
    expect(ContractErrorCode.USAGE_METADATA_TOO_LARGE).toBe('USAGE_METADATA_TOO_LARGE');
  });
});
