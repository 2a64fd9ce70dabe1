import { describe, expect, it } from 'vitest';
import { logGate, type CallerLogEntry } from './log-gate.js';

describe('logGate', () => {
  it('sends entries at or above the floor as plain JSON, and nothing after end()', () => {
    const sent: CallerLogEntry[] = [];
    const gate = logGate((entry) => sent.push(entry), { minLevel: 'info' });
    gate.log('debug', 'too low');
    gate.log('info', 'hello', { at: new Date(0), n: 1 });
    gate.log('shouting' as never, 'unknown level');
    gate.end();
    gate.log('error', 'late');
    expect(sent).toEqual([
      {
        level: 'info',
        message: 'hello',
        data: { at: '1970-01-01T00:00:00.000Z', n: 1 },
      },
    ]);
  });

  it('cuts huge messages, leaves out huge or unserialisable data with a note', () => {
    const sent: CallerLogEntry[] = [];
    const gate = logGate((entry) => sent.push(entry), {
      maxMessageLength: 10,
      maxDataLength: 100,
    });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    gate.log('info', 'x'.repeat(1_000_000), 'y'.repeat(1000));
    gate.log('info', 'cycle', cycle);
    gate.log('info', 'bigint', 10n);
    gate.log('info', 'fn', () => 1);
    expect(sent[0]!.message).toBe('xxxxxxxxxx');
    expect(sent[0]!.data).toMatch(/^\(left out: 1002 characters of JSON/);
    expect(sent[1]!.data).toMatch(/could not be serialised/);
    expect(sent[2]!.data).toMatch(/could not be serialised/);
    expect(sent[3]!.data).toMatch(/no JSON form/);
  });

  it('bounds a flood and says how many entries it dropped', () => {
    const sent: CallerLogEntry[] = [];
    const gate = logGate((entry) => sent.push(entry), {
      burst: 5,
      perSecond: 0.001,
    });
    for (let i = 0; i < 100_000; i++) gate.log('info', `entry ${i}`);
    expect(sent).toHaveLength(5);
  });

  it('survives a message whose toString throws and a caller that throws', () => {
    const gate = logGate(() => {
      throw new Error('gone');
    });
    expect(() =>
      gate.log('info', {
        toString: () => {
          throw new Error('nope');
        },
      } as never),
    ).not.toThrow();
    expect(() => gate.log('info', 'fine')).not.toThrow();
  });
});
