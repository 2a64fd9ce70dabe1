/**
 * `GET /v1/principal` (issue 32): the caller learns its own principal and what it may do, in concrete
 * names (the tools, modes and approvals of this host it may use), for the console to show the
 * signed-in principal what it may do and nothing else. Never the key, never another principal's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouteHost, type RouteHost } from './route-table.js';

const AGENT = 'agent-key-0123456789abcdef';
const OPS = 'ops-key-0123456789abcdef00';
const ROOT = 'root-key-0123456789abcdef0';

const ask = async (url: string, key?: string) => {
  const response = await fetch(`${url}/v1/principal`, {
    headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
  });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as Record<string, unknown> };
};

describe('GET /v1/principal on a host with keys', () => {
  let host: RouteHost;
  beforeAll(async () => {
    host = await startRouteHost({
      file: {
        apiKeys: [`agent=${AGENT}`, `ops=${OPS}`, `root=${ROOT}`],
        principals: {
          agent: { tools: ['testing_*'], modes: ['tool_diagnostics'] },
          ops: { tools: [], approve: ['testing_issue_refund'], admin: true, sessions: 'all' },
        },
      },
    });
  });
  afterAll(async () => {
    await host?.close();
  });

  it('an agent key sees its own name and exactly the tools and modes it may use, never its key', async () => {
    const { status, body, text } = await ask(host.url, AGENT);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      principal: 'agent',
      via: 'apiKey',
      modes: ['tool_diagnostics'],
      approve: [],
      admin: false,
      sessions: 'own',
    });
    expect(body.tools).toEqual(expect.arrayContaining(['testing_calculator', 'testing_issue_refund']));
    expect((body.tools as string[]).every((tool) => tool.startsWith('testing_'))).toBe(true);
    expect(body).not.toHaveProperty('scopes');
    expect(text).not.toContain(AGENT);
  });

  it('an ops key sees that it may decide refunds and use the admin routes, and call no tool', async () => {
    expect((await ask(host.url, OPS)).body).toMatchObject({
      principal: 'ops',
      tools: [],
      approve: ['testing_issue_refund'],
      admin: true,
      sessions: 'all',
    });
  });

  it('a key without an entry may do everything but decide its own calls: every tool, mode and gated tool', async () => {
    const { body } = await ask(host.url, ROOT);
    expect(body).toMatchObject({ principal: 'root', admin: true, sessions: 'all' });
    expect(body.tools).toEqual(expect.arrayContaining(['agent_hello_world', 'testing_calculator']));
    expect(body.approve).toEqual(expect.arrayContaining(['testing_issue_refund']));
  });

  it('without a key it answers 401, as every protected route', async () => {
    expect((await ask(host.url)).status).toBe(401);
  });
});

describe('GET /v1/principal on loopback without keys', () => {
  it('names no principal: the one-user developer mode may do everything', async () => {
    const host = await startRouteHost();
    try {
      const { body } = await ask(host.url);
      expect(body).toMatchObject({ principal: null, via: 'none', admin: true, sessions: 'all' });
      expect((body.modes as string[]).length).toBeGreaterThan(1);
    } finally {
      await host.close();
    }
  });
});
