import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, HOST_ROOT, hostForSuite, runCli, scratch } from './support.js';

const GENERAL_TOOLS = ['agent_hello_world', 'testing_calculator', 'agent_list_modes', 'agent_change_mode'];
/** /mcp lists the pair that reaches the other modes' tools too (see mcp-discovery.test.ts). */
const AT_MCP = [...GENERAL_TOOLS, 'aptix_find_tools', 'aptix_call_tool'];

/** A v2 SDK client that negotiates: it probes server/discover and speaks 2026-07-28 when the server does. */
function modernClient(): Client {
  return new Client({ name: 'aptix-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
}

function texts(result: Record<string, unknown>): string[] {
  return (result.content as Array<{ text: string }>).map((block) => block.text);
}

async function connectHttp(url: string, agentSessionId?: string): Promise<Client> {
  const client = modernClient();
  const headers: Record<string, string> = agentSessionId ? { 'x-aptix-session-id': agentSessionId } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  return client;
}

describe('MCP 2026-07-28 over Streamable HTTP, through the v2 SDK client', () => {
  const host = hostForSuite();

  it('lists the tools of the endpoint mode, whatever was called before, and refuses the others at call time', async () => {
    const client = await connectHttp(`${host.url}/mcp`);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(AT_MCP);
      const sum = await client.callTool({ name: 'testing_calculator', arguments: { operation: 'add', a: 2, b: 3 } });
      expect(sum.isError).toBeFalsy();
      expect(JSON.parse(texts(sum)[0]!)).toMatchObject({ value: 5, sessionId: null });
      expect(sum.structuredContent).toBeUndefined();

      const outside = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
      expect(outside.isError).toBe(true);
      expect(texts(outside)[0]).toContain('not offered in mode "general"');
      expect(texts(outside)[0]).toContain('then call it through aptix_call_tool');

      // An unknown tool is a protocol error (-32602) whose message lists only this mode's tools.
      const unknown = client.callTool({ name: 'no_such_tool', arguments: {} });
      await expect(unknown).rejects.toMatchObject({ code: -32602 });
      await expect(unknown).rejects.toThrow(`Tools in mode "general": ${GENERAL_TOOLS.join(', ')}.`);

      // A mode change needs an agent session: the first one without a handle starts one, and says where its tools are.
      const change = await client.callTool({
        name: 'agent_change_mode',
        arguments: { mode: 'tool_diagnostics', branch: false, reason: 'Debug a slow tool.' },
      });
      expect(change.isError).toBeFalsy();
      const { sessionId } = JSON.parse(texts(change)[0]!) as { sessionId: string };
      expect(texts(change)[1]).toContain(`aptix_call_tool {"sessionId": "${sessionId}"`);
      // The list at this endpoint does not follow the change: it is a function of the URL.
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(AT_MCP);

      const session = (await (await fetch(`${host.url}/v1/sessions/${sessionId}`)).json()) as { mode: string };
      expect(session.mode).toBe('tool_diagnostics');
    } finally {
      await client.close();
    }
  });

  it('serves each mode at /modes/<mode>/mcp, with calls in the agent session the request names', async () => {
    const created = (await (
      await fetch(`${host.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'tool_diagnostics' }),
      })
    ).json()) as { id: string };
    const client = await connectHttp(`${host.url}/modes/tool_diagnostics/mcp`, created.id);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('testing_delay');
      const delay = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
      expect(JSON.parse(texts(delay)[0]!)).toMatchObject({ wasCancelled: false });
      const hello = await client.callTool({ name: 'testing_calculator', arguments: { operation: 'add', a: 1, b: 1 } });
      expect(JSON.parse(texts(hello)[0]!)).toMatchObject({ sessionId: created.id });

      // The session's mode governs what may run, not the URL: back in general, testing_delay is refused here too.
      const back = await client.callTool({
        name: 'agent_change_mode',
        arguments: { mode: 'general', branch: false, reason: 'Done debugging.' },
      });
      // A pinned mode's URL points to the new mode's own URL.
      expect(texts(back)[1]).toContain('/modes/general/mcp');
      const refused = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
      expect(refused.isError).toBe(true);
      expect(texts(refused)[0]).toContain(`not offered in mode "general" (session ${created.id})`);
    } finally {
      await client.close();
    }
  });

  it("sends a tool's progress reports as notifications when the client asks for them", async () => {
    const client = await connectHttp(`${host.url}/mcp/modes/tool_diagnostics`);
    try {
      const reports: Array<{ progress: number; total?: number }> = [];
      const result = await client.callTool(
        { name: 'testing_delay', arguments: { milliseconds: 300 } },
        { onprogress: (progress) => reports.push(progress) },
      );
      expect(result.isError).toBeFalsy();
      expect(reports.length).toBeGreaterThanOrEqual(2);
      expect(reports[0]).toMatchObject({ progress: 0, total: 300 });
      expect(reports.at(-1)).toMatchObject({ progress: 300, total: 300 });
      for (let i = 1; i < reports.length; i++) expect(reports[i]!.progress).toBeGreaterThan(reports[i - 1]!.progress);
    } finally {
      await client.close();
    }
  });

  it('answers an unknown mode endpoint with 404 and the list of modes', async () => {
    const response = await fetch(`${host.url}/mcp/modes/nope`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toContain('Mode "nope" does not exist');
    expect(body.error.message).toContain('tool_diagnostics');
  });
});

describe('MCP 2026-07-28 over stdio, through the v2 SDK client', () => {
  const space = scratch();
  afterAll(() => space.cleanup());

  it('writes nothing but protocol messages to stdout: a start-up failure goes to stderr with a non-zero exit', async () => {
    for (const args of [
      ['mcp', '--session', 'no-such-session'],
      ['mcp', '--mode', 'no_such_mode'],
      ['--config', 'missing.json', 'mcp'],
    ]) {
      const run = await runCli(args, { env: { APTIX_DB: space.db } });
      expect(run.stdout, args.join(' ')).toBe('');
      expect(run.code, args.join(' ')).not.toBe(0);
      expect(run.stderr, args.join(' ')).toMatch(/^aptix: /);
      expect(run.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  });

  it('lists the mode the process serves and runs calls in the --session it was given', async () => {
    const created = (
      await runCli(['sessions', 'create', '--mode', 'tool_diagnostics'], { env: { APTIX_DB: space.db } })
    ).json<{ id: string }>();
    const client = modernClient();
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--session', created.id],
        cwd: HOST_ROOT,
        env: { ...process.env, APTIX_DB: space.db, LOG_LEVEL: 'warn' } as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('testing_delay');
      const sum = await client.callTool({ name: 'testing_calculator', arguments: { operation: 'add', a: 2, b: 2 } });
      expect(JSON.parse(texts(sum)[0]!)).toMatchObject({ value: 4, sessionId: created.id });
    } finally {
      await client.close();
    }
  });
});
