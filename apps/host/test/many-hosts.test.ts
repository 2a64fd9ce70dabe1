import { describe, expect, it } from 'vitest';
import { postgresAvailable, type RunningHost } from './support.js';
import { hostPairOnPostgres } from './suites.js';

const available = await postgresAvailable('the many-hosts test is');

async function post(host: RunningHost, path: string, body: unknown) {
  const response = await fetch(host.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await response.json()) as Record<string, any>;
}
async function get(host: RunningHost, path: string) {
  return (await (await fetch(host.url + path)).json()) as Record<string, any>;
}

describe.skipIf(!available)('several hosts on one PostgreSQL database', () => {
  const hosts = hostPairOnPostgres('aptix_hosts');

  it('a mode change made through one host is seen by the other on its next call', async () => {
    const { a, b } = hosts;
    const { id } = await post(a, '/v1/sessions', {});
    expect((await get(b, `/v1/sessions/${id}`)).mode).toBe('general');
    expect((await get(b, `/v1/tools?sessionId=${id}`)).tools.map((t: any) => t.name)).not.toContain('testing_delay');

    const change = await post(a, '/v1/tools/agent_change_mode/invoke', {
      arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Shared by two hosts.' },
      context: { sessionId: id },
    });
    expect(change).toMatchObject({ successful: true, result: { mode: 'tool_diagnostics' } });

    expect(await get(b, `/v1/sessions/${id}`)).toMatchObject({
      mode: 'tool_diagnostics',
      history: [{ fromMode: 'general', toMode: 'tool_diagnostics' }],
    });
    expect((await get(b, `/v1/tools?sessionId=${id}`)).tools.map((t: any) => t.name)).toContain('testing_delay');
    const call = await post(b, '/v1/tools/testing_delay/invoke', {
      arguments: { milliseconds: 1 },
      context: { sessionId: id },
    });
    expect(call).toMatchObject({ successful: true });

    // And back through the second host: the first sees it.
    await post(b, '/v1/tools/agent_change_mode/invoke', {
      arguments: { mode: 'general', branch: false, reason: 'Back again.' },
      context: { sessionId: id },
    });
    expect((await get(a, `/v1/sessions/${id}`)).history.map((h: any) => h.toMode)).toEqual([
      'tool_diagnostics',
      'general',
    ]);
  });

  it('concurrent mode changes through both hosts lose nothing', async () => {
    const { a, b } = hosts;
    const { id } = await post(a, '/v1/sessions', {});
    const modes = ['tool_diagnostics', 'ddr_authoring', 'general'];
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        post(i % 2 === 0 ? a : b, '/v1/tools/agent_change_mode/invoke', {
          arguments: { mode: modes[i % 3], branch: false, reason: `change ${i}` },
          context: { sessionId: id },
        }),
      ),
    );
    const session = await get(a, `/v1/sessions/${id}`);
    expect(session.history).toHaveLength(40);
    expect(session.mode).toBe(session.history.at(-1).toMode);
    session.history.slice(1).forEach((row: any, i: number) => expect(row.fromMode).toBe(session.history[i].toMode));
  });
});
