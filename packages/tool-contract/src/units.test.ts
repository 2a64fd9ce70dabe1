import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { ContractErrorCode, ToolContractError } from './errors.js';
import { definePrompt } from './prompt.js';
import { defineResource } from './resource.js';
import { completeUnit, readResource, renderPrompt, UnitErrorCode } from './unit-calls.js';
import { PromptRegistry, ResourceRegistry } from './unit-registry.js';
import { inspectPrompt, inspectResource } from './unit-rules.js';
import { parseUriTemplate, uriProblem } from './uri-template.js';

const Summarize = definePrompt({
  name: 'acme_summarize',
  description: 'Asks for a summary of a text.',
  args: Type.Object({
    text: Type.String({ description: 'The text to summarize.' }),
    tone: Type.Optional(Type.Union([Type.Literal('plain'), Type.Literal('formal')], { description: 'The tone.' })),
  }),
  render: ({ text, tone }) => `Summarize in a ${tone ?? 'plain'} tone:\n\n${text}`,
});

const User = defineResource({
  name: 'acme_user',
  uriTemplate: 'acme://users/{id}',
  mimeType: 'application/json',
  read: ({ variables }) => JSON.stringify({ id: variables.id }),
  complete: { id: (typed) => ['ada', 'alan', 'grace'].filter((id) => id.startsWith(typed)) },
});

const codes = (result: { violations: readonly { code: string }[] }) => result.violations.map((v) => v.code);

describe('prompts under the contract', () => {
  it('lists string arguments with their descriptions, required or not, and the literal values', () => {
    const { prompt } = inspectPrompt(Summarize);
    expect(prompt?.arguments).toEqual([
      { name: 'text', description: 'The text to summarize.', required: true },
      { name: 'tone', description: 'The tone.', required: false, values: ['plain', 'formal'] },
    ]);
  });

  it('refuses an argument that is not a string, saying MCP prompt arguments are strings', () => {
    const result = inspectPrompt(
      definePrompt({
        name: 'acme_count',
        description: 'Counts.',
        args: Type.Object({ count: Type.Integer({ description: 'How many.' }) }),
        render: () => 'x',
      }),
    );
    expect(codes(result)).toEqual([ContractErrorCode.PROMPT_ARGUMENTS_INVALID]);
    expect(result.violations[0]!.message).toMatch(/'count' is of type integer, but MCP prompt arguments are strings/);
  });

  it('refuses a bad name, a missing description, a missing render, and completions of unknown arguments', () => {
    expect(codes(inspectPrompt({ kind: 'prompt', name: 'Bad-Name', description: 'x', render: () => 'x' }))).toEqual([
      ContractErrorCode.UNIT_NAME_INVALID,
    ]);
    expect(inspectPrompt({ name: 'Bad-Name', description: 'x', render: () => 'x' }).violations[0]!.message).toMatch(
      /"bad_name"/,
    );
    expect(codes(inspectPrompt({ name: 'ok', render: () => 'x' }))).toEqual([
      ContractErrorCode.UNIT_DESCRIPTION_INVALID,
    ]);
    expect(codes(inspectPrompt({ name: 'ok', description: 'x' }))).toEqual([ContractErrorCode.NOT_A_PROMPT]);
    expect(
      codes(inspectPrompt({ name: 'ok', description: 'x', render: () => 'x', complete: { nope: () => [] } })),
    ).toEqual([ContractErrorCode.UNIT_FUNCTION_INVALID]);
    expect(codes(inspectPrompt({ name: 'ok', description: 'x', render: () => 'x', modes: ['Not A Key'] }))).toEqual([
      ContractErrorCode.UNIT_MODES_INVALID,
    ]);
  });

  it('a registry refuses duplicate names case-insensitively and suggests another', () => {
    const registry = new PromptRegistry();
    registry.register(Summarize);
    const thrown = (() => {
      try {
        registry.register({ ...Summarize });
      } catch (error) {
        return error as ToolContractError;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(ToolContractError);
    expect(thrown?.code).toBe(ContractErrorCode.DUPLICATE_PROMPT);
    expect(thrown?.message).toMatch(/acme_summarize_v2/);
  });

  it('renders a text as one user message, and validates the arguments first', async () => {
    const prompt = new PromptRegistry().register(Summarize);
    const ok = await renderPrompt(prompt, { text: 'Hi', tone: 'formal' });
    expect(ok).toEqual({
      ok: true,
      value: {
        description: 'Asks for a summary of a text.',
        messages: [{ role: 'user', content: { type: 'text', text: 'Summarize in a formal tone:\n\nHi' } }],
      },
    });
    const bad = await renderPrompt(prompt, { tone: 'shouty' });
    expect(bad.ok === false && bad.code).toBe(UnitErrorCode.INVALID_ARGUMENTS);
    const notString = await renderPrompt(prompt, { text: 42 });
    expect(notString.ok === false && notString.message).toMatch(/'text' must be a string/);
  });

  it('turns a render that throws, hangs, or returns garbage into a failure, never an exception', async () => {
    const registry = new PromptRegistry();
    const throws = registry.register(
      definePrompt({
        name: 'throws',
        description: 'x',
        render: () => {
          throw new Error('boom');
        },
      }),
    );
    const hangs = registry.register(
      definePrompt({ name: 'hangs', description: 'x', render: () => new Promise<string>(() => undefined) }),
    );
    const garbage = registry.register(
      definePrompt({ name: 'garbage', description: 'x', render: () => [{ role: 'system', content: 'x' }] as never }),
    );
    const huge = registry.register(
      definePrompt({ name: 'huge', description: 'x', render: () => 'x'.repeat(2_000_000) }),
    );
    expect(await renderPrompt(throws, {})).toMatchObject({
      ok: false,
      code: 'RENDER_FAILED',
      message: expect.stringMatching(/boom/),
    });
    expect(await renderPrompt(hangs, {}, { timeoutMs: 20 })).toMatchObject({ ok: false, code: 'TIMEOUT' });
    expect(await renderPrompt(garbage, {})).toMatchObject({ ok: false, code: 'MALFORMED_RESULT' });
    expect(await renderPrompt(huge, {})).toMatchObject({ ok: false, code: 'RESULT_TOO_LARGE' });
  });

  it('completes a literal union from the schema, and an argument with its own function', async () => {
    const prompt = new PromptRegistry().register(Summarize);
    expect(await completeUnit(prompt, 'tone', 'f', {})).toEqual({
      ok: true,
      value: { values: ['formal'], total: 1, hasMore: false },
    });
  });
});

describe('resources under the contract', () => {
  it('refuses URIs with dot segments, no scheme, or both uri and uriTemplate; and bad templates', () => {
    const base = { name: 'r', mimeType: 'text/plain', read: () => 'x' };
    expect(codes(inspectResource({ ...base, uri: 'acme://docs/../secrets' }))).toEqual([
      ContractErrorCode.RESOURCE_URI_INVALID,
    ]);
    expect(codes(inspectResource({ ...base, uri: '/etc/passwd' }))).toEqual([ContractErrorCode.RESOURCE_URI_INVALID]);
    expect(codes(inspectResource({ ...base, uri: 'a://x', uriTemplate: 'a://{x}' }))).toEqual([
      ContractErrorCode.RESOURCE_URI_INVALID,
    ]);
    expect(inspectResource({ ...base, uriTemplate: 'a://x/{+path}' }).violations[0]!.message).toMatch(/level-1/);
    expect(codes(inspectResource({ ...base, uri: 'a://x', mimeType: 'markdown' }))).toEqual([
      ContractErrorCode.RESOURCE_MIME_TYPE_INVALID,
    ]);
    expect(codes(inspectResource({ ...base, uriTemplate: 'a://x/{id}', complete: { other: () => [] } }))).toEqual([
      ContractErrorCode.UNIT_FUNCTION_INVALID,
    ]);
  });

  it('matches template variables one segment at a time, decoded, and refuses those that climb out', () => {
    const template = parseUriTemplate('acme://users/{id}/files/{file}');
    if (typeof template === 'string') throw new Error(template);
    expect(template.match('acme://users/ada/files/a%20b.txt')).toEqual({ id: 'ada', file: 'a b.txt' });
    expect(template.match('acme://users/ada/files/..')).toBeUndefined();
    expect(template.match('acme://users/ada/files/%2e%2e')).toBeUndefined();
    expect(template.match('acme://users/ada/files/a%2Fb')).toBeUndefined();
    expect(template.match('acme://users/ada/files/%00')).toBeUndefined();
    expect(template.match('acme://users/ada/files/%E0%A4%A')).toBeUndefined();
    expect(template.match('acme://users/a/b/files/c')).toBeUndefined();
    expect(template.expand({ id: 'a/b', file: 'é' })).toBe('acme://users/a%2Fb/files/%C3%A9');
    expect(uriProblem('acme://docs/%2E%2E/x')).toMatch(/"\.\."/);
  });

  it('a registry resolves fixed URIs and templates, and refuses a second resource at one address', () => {
    const registry = new ResourceRegistry();
    registry.register(User);
    expect(registry.resolve('acme://users/ada')?.variables).toEqual({ id: 'ada' });
    expect(registry.resolve('acme://users/ada', new Set())).toBeUndefined();
    expect(() => registry.register({ ...User, name: 'other' })).toThrow(/URI template "acme:\/\/users\/\{id\}"/);
  });

  it('reads text with the declared media type, bytes as base64, and bounds size and time', async () => {
    const registry = new ResourceRegistry();
    const user = registry.register(User);
    expect(await readResource(user, 'acme://users/ada', { id: 'ada' })).toEqual({
      ok: true,
      value: [{ uri: 'acme://users/ada', mimeType: 'application/json', text: '{"id":"ada"}' }],
    });
    const bytes = registry.register({
      name: 'png',
      uri: 'acme://logo',
      mimeType: 'image/png',
      read: () => new Uint8Array([1, 2]),
    });
    expect(await readResource(bytes, 'acme://logo', {})).toMatchObject({ ok: true, value: [{ blob: 'AQI=' }] });
    const big = registry.register({
      name: 'big',
      uri: 'acme://big',
      mimeType: 'text/plain',
      read: () => 'x'.repeat(10 * 1024 * 1024),
    });
    expect(await readResource(big, 'acme://big', {})).toMatchObject({ ok: false, code: 'RESULT_TOO_LARGE' });
    const hangs = registry.register({
      name: 'hangs',
      uri: 'acme://hangs',
      mimeType: 'text/plain',
      read: () => new Promise<string>(() => undefined),
    });
    expect(await readResource(hangs, 'acme://hangs', {}, { timeoutMs: 20 })).toMatchObject({
      ok: false,
      code: 'TIMEOUT',
    });
    expect(await completeUnit(user, 'id', 'a', {})).toMatchObject({ ok: true, value: { values: ['ada', 'alan'] } });
  });
});
