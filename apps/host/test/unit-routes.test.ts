/**
 * Prompts and resources over HTTP (issue 37): the same units and scopes as MCP, described in OpenAPI,
 * with the caller's mistakes as 4xx and a package's failures as 502/504 that name what failed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostWithConfig, type RunningHost } from './support.js';
import { UNIT_PACKAGES } from './unit-fixture.js';

let host: RunningHost;
let cleanup = () => undefined as void;
beforeAll(async () => {
  const started = await startHostWithConfig({
    toolPackages: UNIT_PACKAGES,
    unitTimeoutMs: 300,
    resourceModes: { ddr_authoring: ['fixture_readme'] },
  });
  host = started.host;
  cleanup = () => started.space.cleanup();
});
afterAll(async () => {
  await host?.stop();
  cleanup();
});

const get = async (path: string) => {
  const response = await fetch(`${host.url}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};
const post = async (path: string, body: unknown) => {
  const response = await fetch(`${host.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

describe('GET /v1/prompts and POST /v1/prompts/:name', () => {
  it("lists the default mode's prompts, and another mode's with ?mode=", async () => {
    const general = await get('/v1/prompts');
    expect(general.status).toBe(200);
    expect(general.body.mode).toBe('general');
    expect(general.body.prompts.map((prompt: { name: string }) => prompt.name)).toEqual(
      expect.arrayContaining(['fixture_greeting', 'mode_general']),
    );
    expect(general.body.prompts.map((prompt: { name: string }) => prompt.name)).not.toContain(
      'fixture_diagnostics_only',
    );
    const diagnostics = await get('/v1/prompts?mode=tool_diagnostics');
    expect(diagnostics.body.prompts.map((prompt: { name: string }) => prompt.name)).toContain(
      'fixture_diagnostics_only',
    );
    expect(await get('/v1/prompts?mode=nope')).toMatchObject({
      status: 400,
      body: { error: { code: 'UNKNOWN_MODE' } },
    });
    expect(await get('/v1/prompts?sessionId=no-such-session')).toMatchObject({ status: 404 });
  });

  it('renders a prompt, and answers each failure with its code and status', async () => {
    expect(await post('/v1/prompts/fixture_greeting', { arguments: { name: 'Ada' } })).toEqual({
      status: 200,
      body: {
        description: 'Asks for a greeting of someone, in a style.',
        messages: [
          { role: 'user', content: { type: 'text', text: 'Greet Ada in a casual style.' } },
          { role: 'assistant', content: { type: 'text', text: 'Understood.' } },
        ],
      },
    });
    expect(await post('/v1/prompts/fixture_greeting', {})).toMatchObject({
      status: 400,
      body: { error: { code: 'INVALID_ARGUMENTS' } },
    });
    expect(await post('/v1/prompts/fixture_greeting', { arguments: { name: { first: 'Ada' } } })).toMatchObject({
      status: 400,
    });
    expect(await post('/v1/prompts/nope', {})).toMatchObject({
      status: 404,
      body: { error: { code: 'PROMPT_NOT_FOUND' } },
    });
    const thrown = await post('/v1/prompts/fixture_throws', {});
    expect(thrown).toMatchObject({ status: 502, body: { error: { code: 'RENDER_FAILED' } } });
    expect(thrown.body.error.message).toMatch(/the template store is down/);
    expect(await post('/v1/prompts/fixture_hangs', {})).toMatchObject({
      status: 504,
      body: { error: { code: 'TIMEOUT' } },
    });
  });
});

describe('GET /v1/resources and GET /v1/resources/read', () => {
  it('lists resources and templates, and a resource the configuration adds to a mode only there', async () => {
    const general = await get('/v1/resources');
    expect(general.status).toBe(200);
    const uris = general.body.resources.map((resource: { uri: string }) => resource.uri);
    expect(uris).toEqual(
      expect.arrayContaining(['fixture://logo.png', 'aptix://modes', 'aptix://tools/fixture_bump/guide']),
    );
    // fixture_readme declares no modes, but the configuration names it for ddr_authoring: only there now.
    expect(uris).not.toContain('fixture://docs/readme');
    expect(general.body.templates.map((template: { uriTemplate: string }) => template.uriTemplate)).toContain(
      'fixture://users/{id}',
    );
    const ddr = await get('/v1/resources?mode=ddr_authoring');
    expect(ddr.body.resources.map((resource: { uri: string }) => resource.uri)).toContain('fixture://docs/readme');
  });

  it('reads by URI, and refuses what climbs, what is too large, and what is not there', async () => {
    expect(await get(`/v1/resources/read?uri=${encodeURIComponent('fixture://users/ada')}`)).toEqual({
      status: 200,
      body: {
        contents: [
          {
            uri: 'fixture://users/ada',
            mimeType: 'application/json',
            text: '{"uri":"fixture://users/ada","id":"ada"}',
          },
        ],
      },
    });
    expect(await get(`/v1/resources/read?uri=${encodeURIComponent('fixture://users/%2e%2e')}`)).toMatchObject({
      status: 404,
      body: { error: { code: 'RESOURCE_NOT_FOUND' } },
    });
    expect(await get(`/v1/resources/read?uri=${encodeURIComponent('fixture://a/../b')}`)).toMatchObject({
      status: 404,
    });
    expect(await get(`/v1/resources/read?uri=${encodeURIComponent('fixture://big')}`)).toMatchObject({
      status: 502,
      body: { error: { code: 'RESULT_TOO_LARGE' } },
    });
    expect(await get('/v1/resources/read')).toMatchObject({ status: 400 });
  });
});

it('OpenAPI describes the four routes', async () => {
  const { body } = await get('/openapi.json');
  expect(Object.keys(body.paths)).toEqual(
    expect.arrayContaining(['/v1/prompts', '/v1/prompts/{name}', '/v1/resources', '/v1/resources/read']),
  );
  expect(body.paths['/v1/prompts/{name}'].post.summary).toBe('Render a prompt into messages');
});
