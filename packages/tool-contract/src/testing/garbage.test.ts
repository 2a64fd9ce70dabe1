import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { DEEP_NESTING_LEVELS, garbageArguments, HUGE_STRING_LENGTH } from './garbage.js';

const parses = (json: string) => {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
};

describe('garbageArguments', () => {
  const parameters = Type.Object(
    {
      name: Type.String({ description: 'A name.' }),
      count: Type.Integer({ minimum: 1, description: 'How many.' }),
      mode: Type.Union([Type.Literal('a'), Type.Literal('b')], { description: 'A mode.' }),
    },
    { additionalProperties: false },
  );
  const cases = garbageArguments(parameters);
  const byLabel = new Map(cases.map((entry) => [entry.label, entry.json]));

  it('names every input once', () => {
    expect(byLabel.size).toBe(cases.length);
  });

  it('picks, for each argument, a value its schema refuses', () => {
    expect(byLabel.get('every argument of the wrong type')).toBe(
      '{"name":12345,"count":"not-the-right-type","mode":12345}',
    );
    expect(byLabel.get('\'count\' of the wrong type (string "not-the-right-type")')).toBe(
      '{"count":"not-the-right-type"}',
    );
  });

  it('sends 1 MB strings to string arguments, and 10,000 levels of nesting', () => {
    expect(byLabel.get("a 1 MB string for 'name'")!.length).toBe(HUGE_STRING_LENGTH + '{"name":""}'.length);
    expect(byLabel.has("a 1 MB string for 'count'")).toBe(false);
    expect(byLabel.get('10,000 nested arrays')).toBe('['.repeat(DEEP_NESTING_LEVELS) + ']'.repeat(DEEP_NESTING_LEVELS));
  });

  it('mixes text that is not JSON with JSON that is, prototype keys included', () => {
    const invalid = cases.filter((entry) => !parses(entry.json)).map((entry) => entry.label);
    expect(invalid).toEqual([
      'invalid JSON (cut off)',
      'text that is not JSON',
      'a 1 MB unterminated string',
      '10,000 unclosed objects',
    ]);
    expect(JSON.parse(byLabel.get("a __proto__ key inside 'name'")!)).toEqual({
      name: JSON.parse('{"__proto__":{"aptixContractPolluted":true}}'),
    });
  });

  it('still has inputs for a tool without arguments', () => {
    const none = garbageArguments(Type.Object({}, { additionalProperties: false }));
    expect(none.map((entry) => entry.label)).toContain("a 1 MB string for 'value'");
    expect(none.map((entry) => entry.label)).not.toContain('every argument of the wrong type');
  });
});
