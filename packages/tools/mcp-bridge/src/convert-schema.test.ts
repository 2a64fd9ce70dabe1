import { describe, expect, it } from 'vitest';
import { validateArguments } from '@aptix/tool-contract';
import { convertInputSchema } from './convert-schema.js';

describe('convertInputSchema', () => {
  it('keeps a plain schema as it is, strict', () => {
    const converted = convertInputSchema({
      type: 'object',
      properties: { message: { type: 'string', description: 'Text.' } },
      required: ['message'],
      $schema: 'http://json-schema.org/draft-07/schema#',
    });
    expect(converted.parameters).toEqual({
      type: 'object',
      properties: { message: { type: 'string', description: 'Text.' } },
      required: ['message'],
    });
    expect(converted.strict).toBe(true);
    expect(converted.notes).toEqual([]);
  });

  it('inlines local $refs, types untyped properties as any JSON value, and describes what the server did not', () => {
    const converted = convertInputSchema({
      type: 'object',
      $defs: {
        point: {
          type: 'object',
          properties: { x: { type: 'number' }, y: { type: 'number', description: 'Y.' } },
          required: ['x', 'y'],
        },
      },
      properties: { at: { $ref: '#/$defs/point', description: 'Where.' }, payload: {} },
      required: ['at', 'ghost'],
    });
    const parameters = converted.parameters!;
    expect(parameters.required).toEqual(['at']);
    expect(parameters.properties.at).toMatchObject({
      type: 'object',
      description: 'Where.',
      properties: { x: { type: 'number', description: expect.stringContaining("'x'") } },
    });
    expect(parameters.properties.payload!.type).toEqual(['string', 'number', 'boolean', 'object', 'array', 'null']);
    expect(converted.notes.join('\n')).toMatch(/payload: declares no type[\s\S]*ghost|ghost|dropped 'required'/);
    // What the server accepts, Aptix still accepts; what it refuses, Aptix refuses.
    expect(validateArguments('t', parameters, { at: { x: 1, y: 2 }, payload: [1] }).ok).toBe(true);
    expect(validateArguments('t', parameters, { at: { x: 1 } }).ok).toBe(false);
  });

  it('drops keywords and formats the validator does not know, and notes them', () => {
    const converted = convertInputSchema({
      type: 'object',
      properties: { when: { type: 'string', format: 'x-custom-date', description: 'When.', 'x-mcp-header': 'When' } },
    });
    expect(converted.parameters!.properties.when).toEqual({ type: 'string', description: 'When.' });
    expect(converted.notes.join('\n')).toContain("dropped the keyword 'x-mcp-header'");
    expect(converted.notes.join('\n')).toContain("dropped the format 'x-custom-date'");
  });

  it('offers what strict mode cannot take with strict: false, and says why', () => {
    const converted = convertInputSchema({
      type: 'object',
      properties: { shape: { description: 'A shape.', oneOf: [{ type: 'string' }, { type: 'number' }] } },
    });
    expect(converted.parameters).toBeDefined();
    expect(converted.strict).toBe(false);
    expect(converted.strictProblems.join(' ')).toContain("'oneOf' is not supported in strict mode");
  });

  it('refuses what no model-facing schema can express', () => {
    expect(
      convertInputSchema({
        type: 'object',
        $defs: { n: { type: 'object', properties: { next: { $ref: '#/$defs/n' } } } },
        properties: { head: { $ref: '#/$defs/n' } },
      }).problems.join(' '),
    ).toContain('refers to itself');
    expect(convertInputSchema({ type: 'string' }).problems.join(' ')).toContain('root must be an object schema');
    expect(
      convertInputSchema({
        type: 'object',
        properties: { a: { $ref: 'https://example.com/schema.json' } },
      }).problems.join(' '),
    ).toContain("does not point into the schema's own");
    expect(convertInputSchema(null).problems).toEqual(['the input schema is not a JSON object']);
    let deep: Record<string, unknown> = { type: 'string', description: 'leaf' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', description: 'level', properties: { inner: deep } };
    expect(convertInputSchema(deep).problems.join(' ')).toContain('nested deeper than');
  });
});
