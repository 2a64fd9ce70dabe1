import { describe, expect, it } from 'vitest';
import { ContractErrorCode } from '../errors.js';
import { CONTRACT_CHECK_OF, ContractCheckCode } from './codes.js';

describe('ContractCheckCode', () => {
  it('spells every code as its own key, so a code is never a typo away from another', () => {
    for (const [key, value] of Object.entries(ContractCheckCode)) expect(value).toBe(key);
  });

  it('shares no code with the registry', () => {
    const registry = new Set<string>(Object.values(ContractErrorCode));
    expect(Object.values(ContractCheckCode).filter((code) => registry.has(code))).toEqual([]);
  });

  it('files every code of the kit and of the registry under exactly one check', () => {
    const all = [...Object.values(ContractErrorCode), ...Object.values(ContractCheckCode)].sort();
    expect(Object.keys(CONTRACT_CHECK_OF).sort()).toEqual(all);
  });
});
