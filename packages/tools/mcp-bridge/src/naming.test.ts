import { describe, expect, it } from 'vitest';
import { TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN } from '@aptix/tool-contract';
import { aptixNames, stableNames, defaultPrefix, snakeCase } from './naming.js';

describe('tool names', () => {
  it('turns remote names into lowercase_snake_case under the prefix', () => {
    expect(snakeCase('get-tiny-image')).toBe('get_tiny_image');
    expect(snakeCase('readHTTPResponse.v2')).toBe('read_http_response_v2');
    expect(snakeCase('  Ünïcode  tool ')).toBe('n_code_tool');
    expect(defaultPrefix('Everything Server')).toBe('everything_server');
    expect(defaultPrefix('***')).toBe('mcp');
    expect(aptixNames('fs', ['read_file', 'list-directory'])).toEqual(
      new Map([
        ['read_file', 'fs_read_file'],
        ['list-directory', 'fs_list_directory'],
      ]),
    );
  });

  it('keeps names that would collide apart with a hash of the remote name, whatever order the server lists them in', () => {
    const forward = aptixNames('fs', ['get-sum', 'get_sum', 'GetSum']);
    const backward = aptixNames('fs', ['GetSum', 'get_sum', 'get-sum']);
    expect(new Set(forward.values()).size).toBe(3);
    for (const [remote, name] of forward) {
      expect(name).toMatch(/^fs_get_sum_[0-9a-f]{8}$/);
      expect(backward.get(remote)).toBe(name);
    }
  });

  it('cuts names past 64 characters and keeps them unique and valid', () => {
    const long = ['x'.repeat(100), `${'x'.repeat(99)}y`];
    const names = [...aptixNames('a_rather_long_prefix', long).values()];
    expect(new Set(names).size).toBe(2);
    for (const name of names) {
      expect(name.length).toBeLessThanOrEqual(TOOL_NAME_MAX_LENGTH);
      expect(name).toMatch(TOOL_NAME_PATTERN);
    }
  });

  it('gives a remote name of only punctuation a valid name, and honours rename', () => {
    expect(aptixNames('p', ['---']).get('---')).toBe('p_tool');
    expect(aptixNames('p', ['echo', 'say'], { echo: 'say_back' }).get('echo')).toBe('say_back');
    // A rename never shadows a derived name: the derived one moves aside.
    const clash = aptixNames('p', ['a', 'b'], { a: 'p_b' });
    expect(clash.get('a')).toBe('p_b');
    expect(clash.get('b')).toMatch(/^p_b_[0-9a-f]{8}$/);
  });

  it('cannot be tricked into prototype keys by a rename map', () => {
    expect(aptixNames('p', ['constructor', '__proto__']).get('constructor')).toBe('p_constructor');
    expect(aptixNames('p', ['__proto__']).get('__proto__')).toBe('p_proto');
  });

  it('keeps the names already offered when the list changes: a newcomer never takes one', () => {
    const kept = new Map([['get_sum', 'p_get_sum']]);
    const names = stableNames('p', ['get_sum', 'get-sum', 'echo'], {}, kept);
    expect(names.get('get_sum')).toBe('p_get_sum');
    expect(names.get('get-sum')).toMatch(/^p_get_sum_[0-9a-f]{8}$/);
    expect(names.get('echo')).toBe('p_echo');
    // Without names to keep, it is aptixNames.
    expect(stableNames('p', ['a', 'b'])).toEqual(aptixNames('p', ['a', 'b']));
  });
});
