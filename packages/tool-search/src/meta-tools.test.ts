import { describe, expect, it } from 'vitest';
import { acceptsNull, type JsonSchema } from '@aptix/tool-contract';
import { CALL_TOOL, FIND_TOOLS, metaToolDefinitions, readCallArguments, readFindArguments } from './meta-tools.js';

describe('the meta tools on the wire', () => {
  it('offers the find tool in OpenAI strict mode, every argument required and nullable, and the call tool outside it', () => {
    const [find, call] = metaToolDefinitions('responses');
    expect(find).toMatchObject({ type: 'function', name: FIND_TOOLS, strict: true });
    expect(find!.parameters).toMatchObject({ additionalProperties: false, required: ['query', 'sessionId', 'limit'] });
    for (const property of Object.values((find!.parameters as { properties: Record<string, JsonSchema> }).properties))
      expect(acceptsNull(property)).toBe(true);
    // The call tool's arguments are an open object, which strict mode cannot express.
    expect(call).toMatchObject({ type: 'function', name: CALL_TOOL, strict: false });
  });

  it('gives the same tools nested for Chat Completions and as MCP tools/list entries', () => {
    expect(metaToolDefinitions('chat').map((tool) => tool.function.name)).toEqual([FIND_TOOLS, CALL_TOOL]);
    const [find, call] = metaToolDefinitions('mcp');
    expect(find).toMatchObject({
      name: FIND_TOOLS,
      inputSchema: { type: 'object', required: [] },
      annotations: { readOnlyHint: true },
    });
    expect(call!.inputSchema).toMatchObject({ type: 'object', required: ['name'] });
    expect(metaToolDefinitions('mcp')).toBe(metaToolDefinitions('mcp'));
  });
});

describe('reading the arguments a model sent', () => {
  it('takes null as a left-out argument, as strict mode sends it', () => {
    expect(readFindArguments({ query: 'refund', sessionId: null, limit: null })).toEqual({
      ok: true,
      value: { query: 'refund' },
    });
  });

  it('names the field that is wrong, and how', () => {
    const read = readFindArguments({ query: 'refund', limit: 500 });
    expect(read.ok).toBe(false);
    expect(!read.ok && read.message).toMatch(/limit/);
    const call = readCallArguments({ arguments: {} });
    expect(!call.ok && call.message).toMatch(/name/);
    const unknown = readCallArguments({ name: 'x', args: {} });
    expect(!unknown.ok && unknown.message).toMatch(/args/);
  });

  it('accepts the inner arguments as JSON text of an object, and refuses any other text', () => {
    expect(readCallArguments({ name: 'testing_calculator', arguments: '{"a":1}' })).toEqual({
      ok: true,
      value: { name: 'testing_calculator', arguments: { a: 1 } },
    });
    expect(readCallArguments({ name: 'testing_calculator', arguments: '[1]' }).ok).toBe(false);
    expect(readCallArguments({ name: 'testing_calculator', arguments: 'not json' }).ok).toBe(false);
  });

  it('refuses a __proto__ key at the top, and keeps one inside the inner arguments an own key for the executor to refuse', () => {
    expect(readCallArguments(JSON.parse('{"name":"t","__proto__":{"polluted":1}}')).ok).toBe(false);
    for (const input of [
      JSON.parse('{"name":"t","arguments":{"__proto__":{"polluted":1}}}'),
      { name: 't', arguments: '{"__proto__":{"polluted":1}}' },
    ]) {
      const read = readCallArguments(input);
      const inner = read.ok ? read.value.arguments! : {};
      expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
      expect(Object.prototype.hasOwnProperty.call(inner, '__proto__')).toBe(true);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
