import { describe, expect, it } from 'vitest';
import { missingUsageSections, usage } from './usage.js';
import { usageGuide, type UsageGuideSections } from './usage-guide.js';

describe('usageGuide', () => {
  it('writes the text the usage tag gives for the same guide written by hand', () => {
    const text = usageGuide('testing_delay', {
      purpose: 'Wait for a given time, to test time-outs, cancellation and slow tools.',
      rules: ['Call it only when asked for a delay.', 'Do not use it to pace other tool calls.'],
      arguments: ['milliseconds (required): how long to wait, a whole number from 0 to 60000.'],
      result: 'wasCancelled, elapsedMs, requestedMs.',
      errors: {
        INVALID_ARGUMENTS: "'milliseconds' is missing or out of range.",
        TIMEOUT: 'the host stopped the call.',
      },
      good: '{ "milliseconds": 250 } → waits about a quarter of a second.',
      bad: ['{ "milliseconds": 120000 }: at most 60000.', '{ "milliseconds": 1.5 }:\nwhole milliseconds only.   '],
    });
    expect(text).toBe(usage`
      testing_delay — Usage Guide

      Primary purpose:
      - Wait for a given time, to test time-outs, cancellation and slow tools.

      Rules:
      - Call it only when asked for a delay.
      - Do not use it to pace other tool calls.

      Arguments:
      - milliseconds (required): how long to wait, a whole number from 0 to 60000.

      Result:
      - wasCancelled, elapsedMs, requestedMs.

      Error codes:
      - INVALID_ARGUMENTS: 'milliseconds' is missing or out of range.
      - TIMEOUT: the host stopped the call.

      Good usage:
      - { "milliseconds": 250 } → waits about a quarter of a second.

      Bad usage:
      - { "milliseconds": 120000 }: at most 60000.
      - { "milliseconds": 1.5 }:
        whole milliseconds only.
    `);
    expect(missingUsageSections(text)).toEqual([]);
  });

  it('leaves out a section not given (from JavaScript), which the contract kit then reports', () => {
    const text = usageGuide('x_tool', {
      purpose: 'p',
      rules: 'r',
      arguments: 'a',
      errors: 'e',
      good: 'g',
    } as UsageGuideSections);
    expect(missingUsageSections(text)).toEqual(['Bad usage']);
  });
});
