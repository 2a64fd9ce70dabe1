/**
 * The agent loop holds to the permissions of the principal whose turn it is (issue 32), as HTTP and MCP
 * do: a tool the principal may not call, or a mode it may not move into, comes back to the model as a
 * FORBIDDEN failure naming the permission, and nothing runs; what it may call runs as before.
 */
import { call, respond, ScriptedResponsesServer } from '@aptix/reasoner/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostWithConfig, type RunningHost } from './support.js';

const KEYS = { agent: 'agent-key-0123456789abcdef', ops: 'ops-key-0123456789abcdef' };
const CONFIG = {
  principals: {
    agent: { tools: ['testing_calculator', 'agent_list_modes', 'agent_change_mode'], modes: ['general'] },
    ops: { sessions: 'all' },
  },
};

describe('the agent loop, for a principal with limits', () => {
  let host: RunningHost;
  let model: ScriptedResponsesServer;
  let cleanup: () => void = () => undefined;
  beforeAll(async () => {
    model = await ScriptedResponsesServer.start();
    const started = await startHostWithConfig(CONFIG, {
      APTIX_API_KEYS: `agent=${KEYS.agent},ops=${KEYS.ops}`,
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'test-key',
      APTIX_MODEL: 'scripted-model',
    });
    host = started.host;
    cleanup = () => started.space.cleanup();
  });
  afterAll(async () => {
    await host?.stop();
    await model?.close();
    cleanup();
  });

  const post = async (who: keyof typeof KEYS, path: string, body: unknown) =>
    fetch(`${host.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS[who]}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const outputOf = (request: (typeof model.requests)[number], callId: string) =>
    String(request.body.input.find((item) => item.type === 'function_call_output' && item.call_id === callId)?.output);

  it('refuses the tool the principal may not call, naming the permission, and runs the one it may', async () => {
    const { id } = (await (await post('agent', '/v1/sessions', {})).json()) as { id: string };
    model.script(
      respond(
        undefined,
        call('hello', 'agent_hello_world', { name: 'Ada' }),
        call('sum', 'testing_calculator', { operation: 'add', a: 2, b: 3 }),
      ),
      respond('Done.'),
    );
    const before = model.requests.length;
    const response = await post('agent', `/v1/sessions/${id}/messages`, { input: 'Greet Ada and add 2 and 3.' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { toolCalls: Array<{ name: string; successful: boolean }> };
    expect(body.toolCalls).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'agent_hello_world', successful: false }),
        expect.objectContaining({ name: 'testing_calculator', successful: true }),
      ]),
    );
    const second = model.requests.slice(before)[1]!;
    const refused = outputOf(second, 'hello');
    expect(refused).toContain('FORBIDDEN');
    expect(refused).toContain('needs the permission tools: agent_hello_world');
    expect(refused).not.toContain('Hello, Ada');
    expect(outputOf(second, 'sum')).toContain('5');
  });

  it('refuses a mode change into a mode it may not use, and the session stays in its mode', async () => {
    const { id } = (await (await post('agent', '/v1/sessions', {})).json()) as { id: string };
    model.script(
      respond(
        undefined,
        call('move', 'agent_change_mode', { mode: 'tool_diagnostics', branch: false, reason: 'Try the delay tool.' }),
      ),
      respond('I may not move there.'),
    );
    const before = model.requests.length;
    const response = await post('agent', `/v1/sessions/${id}/messages`, { input: 'Move to diagnostics.' });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { mode: string }).mode).toBe('general');
    const refused = outputOf(model.requests.slice(before)[1]!, 'move');
    expect(refused).toContain('needs the permission modes: tool_diagnostics');
    const session = (await (
      await fetch(`${host.url}/v1/sessions/${id}`, { headers: { authorization: `Bearer ${KEYS.agent}` } })
    ).json()) as { mode: string };
    expect(session.mode).toBe('general');
  });

  it('a principal without limits still gets every tool it calls', async () => {
    const { id } = (await (await post('ops', '/v1/sessions', {})).json()) as { id: string };
    model.script(respond(undefined, call('hello', 'agent_hello_world', { name: 'Ada' })), respond('Hello.'));
    const before = model.requests.length;
    const response = await post('ops', `/v1/sessions/${id}/messages`, { input: 'Greet Ada.' });
    expect(response.status).toBe(200);
    expect(outputOf(model.requests.slice(before)[1]!, 'hello')).toContain('Ada');
  });
});
