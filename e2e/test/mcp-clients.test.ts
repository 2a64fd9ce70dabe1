/**
 * Modes for every MCP client (issue 31), through the clients people run, each configured ONLY with the
 * README's `/mcp` URL or `aptix mcp`, against a real `aptix serve` child process on a scratch SQLite
 * file (one per describe):
 *
 * - the OpenAI Agents SDK (`MCPServerStreamableHttp`, `MCPServerStdio`), the AI SDK (`@ai-sdk/mcp`
 *   2.x, `generateText` with `stopWhen`) and LangChain (`@langchain/mcp-adapters` 1.1, `createAgent`;
 *   a 2025-11-25 client) run their own agent loops with a scripted model (clients/scripted.ts) that
 *   reads the session id, tool names and approval ids from the tool results the framework handed it;
 * - the Python `mcp` SDK (its default 2026-07-28 mode and its legacy 2025 mode) and the MCP Inspector
 *   CLI have no agent loop: a script (clients/python_modes.py) or the test plays the model's steps,
 *   each read from the answer before.
 *
 * For each: a mode change in one step and a tool of the new mode in a later one (through
 * aptix_call_tool with the session id the change returned); invalid arguments named; a gated call that
 * waits for an approval a person then gives over HTTP; and the refusal texts, which say something the
 * client can do, so nothing loops.
 */
import { createMCPClient } from '@ai-sdk/mcp';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { createAgent } from 'langchain';
import { Agent, MCPServerStdio, MCPServerStreamableHttp, run, type MCPServer } from '@openai/agents';
import { generateText, stepCountIs } from 'ai';
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  APTIX_BIN,
  aptixForSuite,
  approvalIdIn,
  approvalOf,
  approve,
  sessionMode,
  type Aptix,
} from './clients/aptix.js';
import {
  AgentsScriptedModel,
  LangChainScriptedModel,
  Script,
  aiSdkScriptedModel,
  scenarios,
  type Step,
} from './clients/scripted.js';
import { WORKSPACE } from './support.js';

const GENERAL = ['agent_hello_world', 'testing_calculator', 'agent_list_modes', 'agent_change_mode'];
const SURFACE = [...GENERAL, 'aptix_find_tools', 'aptix_call_tool'];

/** A direct call of another mode's tool at /mcp without a session, on 2026-07-28. */
const DIRECT_REFUSAL =
  'Tool "testing_delay" is not offered in mode "general"; it was not run. Tools in this ' +
  'mode: agent_hello_world, testing_calculator, agent_list_modes, agent_change_mode. ' +
  'testing_delay is in mode "tool_diagnostics": switch with agent_change_mode, then call it ' +
  'through aptix_call_tool with the sessionId agent_change_mode returns.';
/** The same through aptix_call_tool without a sessionId, on 2026-07-28. */
const SESSIONLESS_REFUSAL =
  'Tool "testing_delay" is not offered in the default mode "general" (no sessionId was ' +
  'given); it was not run. Tools in this mode: agent_hello_world, testing_calculator, ' +
  'agent_list_modes, agent_change_mode (aptix_find_tools searches them). It is offered in ' +
  'mode "tool_diagnostics": call agent_change_mode with that mode, then call testing_delay ' +
  'through aptix_call_tool with the sessionId agent_change_mode returns.';
const INVALID_DELAY = 'Invalid arguments for testing_delay: \'milliseconds\' must be integer, got string "soon".';
/** How agent_change_mode's second block goes on after naming the new mode, on either revision. */
const pairTail = (sessionId: string) =>
  `find them with aptix_find_tools {"sessionId": "${sessionId}", "query": "<what you want to ` +
  `do>"} and call one with aptix_call_tool {"sessionId": "${sessionId}", "name": "<tool>", ` +
  `"arguments": {…}}. To change this session's mode again, call agent_change_mode through ` +
  `aptix_call_tool with the same sessionId.`;
/** The second block of agent_change_mode's answer: where the new mode's tools are. */
const guidance = {
  modern: (sessionId: string) =>
    `Agent session ${sessionId} is now in mode "tool_diagnostics". Its tools are not in your ` +
    `tool list: ${pairTail(sessionId)} Tools called directly, without a sessionId, keep working ` +
    `in the default mode.`,
  legacy: (sessionId: string) =>
    `Agent session ${sessionId} is now in mode "tool_diagnostics". If your tool list does not show this mode's tools, ${pairTail(sessionId)}`,
  /** Over stdio, 2026-07-28: the `aptix mcp` connection keeps the session the change started. */
  stdio: (sessionId: string) =>
    `Agent session ${sessionId} is now in mode "tool_diagnostics", and this connection's calls run in it, direct ones too. Its tools that are not in your tool list: ${pairTail(sessionId)}`,
};
/** On 2025-11-25 the MCP session works in its own agent session (`own`), which the refusals name. */
const legacyDirectRefusal = (own: string) =>
  `Tool "testing_delay" is not offered in mode "general" (session ${own}); it was not run. ` +
  `Tools in this mode: agent_hello_world, testing_calculator, agent_list_modes, ` +
  `agent_change_mode. The session's mode may have changed since the tools were listed: list ` +
  `the tools again before calling one. To use "testing_delay", switch to a mode that offers ` +
  `it with agent_change_mode.`;
const legacySessionlessRefusal = (own: string) =>
  `Tool "testing_delay" is not offered in mode "general" of agent session ${own}; it was not ` +
  `run. Tools in this mode: agent_hello_world, testing_calculator, agent_list_modes, ` +
  `agent_change_mode (aptix_find_tools searches them with {"sessionId": "${own}"}). It is ` +
  `offered in mode "tool_diagnostics": change the session's mode with aptix_call_tool ` +
  `{"name": "agent_change_mode", "arguments": {"mode": "tool_diagnostics", "branch": false, ` +
  `"reason": "…"}, "sessionId": "${own}"}, then call it again.`;

/** The text of each content block of an MCP result. */
const blockTexts = (blocks: ReadonlyArray<Record<string, unknown>>): string[] =>
  blocks.map((block) => String(block.text));

type Played = { script: Script; output: string; sessionId: string | undefined };
type Loop = (steps: readonly Step[]) => Promise<{ script: Script; output: string }>;
interface Framework {
  /** The revision the framework's client negotiates. */
  readonly era: 'modern' | 'legacy';
  /** Served by `aptix mcp` over stdio, whose connection keeps the agent session a change started. */
  readonly stdio?: boolean;
  /** How the framework hands its model a tool result marked isError (as it is, or wrapped in its own words). */
  readonly error: (text: string) => string;
  /** Whether the framework checks a call against the tool's schema itself, before anything reaches the host. */
  readonly checksSchema: boolean;
  /** A prefix for the orders its gated calls refund. */
  readonly orders: string;
}
const asIs = (text: string) => text;

/**
 * What every framework with an agent loop must show, whatever its loop: `play` runs one scenario
 * through the framework with the scripted model.
 */
function agentLoopSuite(aptix: Aptix, loop: Loop, framework: Framework): void {
  const play = async (scenario: { steps: Step[]; sessionId(): string | undefined }): Promise<Played> => ({
    ...(await loop(scenario.steps)),
    sessionId: scenario.sessionId(),
  });

  it('changes mode in one step and runs a tool of the new mode in a later one, with the session id it read; the tool list never changes', async () => {
    const { script, output, sessionId } = await play(scenarios.modeChange());
    expect(sessionId).toEqual(expect.any(String));
    expect(script.read[1]).toEqual([
      expect.stringContaining(`"sessionId":"${sessionId}"`),
      (framework.stdio === true && framework.era === 'modern' ? guidance.stdio : guidance[framework.era])(sessionId!),
    ]);
    const found = JSON.parse(script.read[2]![0]!);
    expect(found).toMatchObject({ mode: 'tool_diagnostics', sessionId });
    expect(found.tools[0].name).toBe('testing_delay');
    expect(JSON.parse(script.read[3]![0]!)).toMatchObject({ wasCancelled: false, requestedMs: 1, sessionId });
    expect(output).toContain('"wasCancelled":false');
    // Every step was offered the same stable surface (SEP-2567): the new mode's tools come through the pair.
    expect(script.offered).toEqual(script.offered.map(() => SURFACE));
    expect(await sessionMode(aptix.url, sessionId!)).toBe('tool_diagnostics');
  });

  it('invalid arguments come back naming the field, for the tool the pair calls and for the pair itself (unless the framework checks it first)', async () => {
    const { script, sessionId } = await play(scenarios.invalidArguments());
    expect(script.read[2]).toEqual([framework.error(INVALID_DELAY)]);
    if (framework.checksSchema) {
      // The pair's own schema is checked by the framework, and its answer is its own (LangChain's names no field).
      expect(script.read[3]![0]).toContain("Error invoking tool 'aptix_call_tool'");
      expect(script.read[3]![0]).toContain('Received tool input did not match expected schema');
    } else {
      expect(script.read[3]![0]).toMatch(/\bname\b/);
      expect(script.read[3]![0]).toContain(
        'Call aptix_call_tool as {"name": "<tool>", "arguments": {…}, "sessionId": "<the id agent_change_mode returned, or null>"}.',
      );
    }
    expect(JSON.parse(script.read[4]![0]!)).toMatchObject({ wasCancelled: false, sessionId });
  });

  it('a gated call through the pair waits for approval; a person approves over HTTP and it runs once, in the session', async () => {
    const orderId = `${framework.orders}-1`;
    const { script, output, sessionId } = await play(scenarios.gated(orderId));
    const pending = script.read[2]![0]!;
    expect(pending).toContain("testing_issue_refund awaits a person's approval (approval ");
    expect(pending).toContain('Nothing has run yet.');
    const approvalId = approvalIdIn(pending);
    expect(output).toBe(`The refund waits for approval ${approvalId}.`);
    expect(await approvalOf(aptix.url, approvalId)).toMatchObject({
      status: 'pending',
      sessionId,
      toolName: 'testing_issue_refund',
    });
    expect(await approve(aptix.url, approvalId)).toMatchObject({
      status: 'executed',
      result: { successful: true, result: { orderId, status: 'refunded', sessionId } },
    });
    expect((await approvalOf(aptix.url, approvalId)).status).toBe('executed');
  });

  it('nothing loops: a refused call says what to do, the model does it once and is done', async () => {
    const { script, sessionId } = await play(scenarios.followTheRefusal());
    // On 2025-11-25 the call without a sessionId runs in the MCP session's own agent session, the one
    // the change then moves (so the id the model read after it is that session's).
    expect(script.read[1]).toEqual([
      framework.error(framework.era === 'modern' ? SESSIONLESS_REFUSAL : legacySessionlessRefusal(sessionId!)),
    ]);
    expect(JSON.parse(script.read[3]![0]!)).toMatchObject({ wasCancelled: false, sessionId });
    expect(script.read).toHaveLength(4);
  });
}

describe('OpenAI Agents SDK 0.20, its Runner and a scripted Model', () => {
  const aptix = aptixForSuite();

  const transports: Array<{ name: string; stdio: boolean; server: () => MCPServer }> = [
    // The SDK's default time-out of a request is 5 s; on a loaded 2-core CI machine a stdio host's first answer can take longer.
    {
      name: 'MCPServerStreamableHttp at /mcp',
      stdio: false,
      server: () =>
        new MCPServerStreamableHttp({ url: `${aptix.url}/mcp`, name: 'aptix', clientSessionTimeoutSeconds: 60 }),
    },
    {
      name: 'MCPServerStdio running aptix mcp',
      stdio: true,
      // The same SQLite file as the HTTP host, so a person decides the stdio call's approval over HTTP.
      server: () =>
        new MCPServerStdio({
          command: process.execPath,
          args: [APTIX_BIN, 'mcp'],
          cwd: WORKSPACE,
          env: { PATH: process.env.PATH ?? '', APTIX_DB: aptix.db, LOG_LEVEL: 'warn' },
          name: 'aptix',
          clientSessionTimeoutSeconds: 60,
        }),
    },
  ];

  describe.each(transports)('$name', (transport) => {
    // A connection per test: over stdio the `aptix mcp` process keeps the agent session its first
    // agent_change_mode started (see the last test), so tests sharing one would depend on their order.
    let server: MCPServer;
    beforeEach(async () => {
      server = transport.server();
      await server.connect();
    });
    afterEach(async () => server?.close());

    it('negotiates 2026-07-28 by itself', () => {
      // The Agents SDK does not expose the negotiated version: read it from the v2 SDK Client it wraps.
      const inner = server as unknown as {
        underlying: { session: { getNegotiatedProtocolVersion(): string | undefined } };
      };
      expect(inner.underlying.session.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    });

    it("a direct call of another mode's tool without a session is refused, saying how to reach it", async () => {
      // The Runner never sends it (a tool outside its list fails the run with "Tool testing_delay not
      // found in agent"), but the server object's own callTool does.
      const result = await server.callTool('testing_delay', { milliseconds: 1 });
      expect(blockTexts(result)).toEqual([DIRECT_REFUSAL]);
    });

    it('a model that names a tool it was not listed fails the run in the SDK itself ("not found in agent")', async () => {
      const script = new Script([() => ({ call: 'testing_delay', args: { milliseconds: 1 } })]);
      const agent = new Agent({ name: 'aptix-user', model: new AgentsScriptedModel(script), mcpServers: [server] });
      await expect(run(agent, 'Wait a millisecond.', { maxTurns: 1 })).rejects.toThrow(
        'Tool testing_delay not found in agent aptix-user',
      );
    });

    agentLoopSuite(
      aptix,
      async (steps) => {
        const script = new Script(steps);
        const agent = new Agent({
          name: 'aptix-user',
          instructions: 'Use the Aptix tools.',
          model: new AgentsScriptedModel(script),
          mcpServers: [server],
        });
        const result = await run(agent, 'Try the diagnostics tools.', { maxTurns: steps.length });
        return { script, output: String(result.finalOutput) };
      },
      {
        era: 'modern',
        stdio: transport.stdio,
        error: asIs,
        checksSchema: false,
        orders: transport.stdio ? 'AGENTS-STDIO' : 'AGENTS-HTTP',
      },
    );

    /**
     * The guidance after agent_change_mode says where direct calls run next, and they do: over HTTP in
     * the default mode (each request names its session, or none); over stdio in the session the change
     * started, which the `aptix mcp` connection keeps.
     */
    it('after a change, a direct call without a sessionId does what the guidance says it does', async () => {
      const change = blockTexts(
        await server.callTool('agent_change_mode', {
          mode: 'tool_diagnostics',
          branch: false,
          reason: 'Try the diagnostics tools.',
        }),
      );
      const promisesDefaultMode = change[1]!.includes(
        'Tools called directly, without a sessionId, keep working in the default mode.',
      );
      const promisesSession = change[1]!.includes("this connection's calls run in it, direct ones too");
      const direct = blockTexts(await server.callTool('testing_delay', { milliseconds: 1 }));
      const ranInSession =
        direct[0]!.startsWith('{') && JSON.parse(direct[0]!).sessionId === JSON.parse(change[0]!).sessionId;
      if (transport.stdio)
        expect({ promisesDefaultMode, promisesSession, ranInSession }).toEqual({
          promisesDefaultMode: false,
          promisesSession: true,
          ranInSession: true,
        });
      else
        expect({ promisesDefaultMode, promisesSession, ranInSession }).toEqual({
          promisesDefaultMode: true,
          promisesSession: false,
          ranInSession: false,
        });
    });
  });
});

describe('AI SDK 7 with @ai-sdk/mcp 2.x at /mcp, generateText and MockLanguageModelV4', () => {
  const aptix = aptixForSuite();
  let client: Awaited<ReturnType<typeof createMCPClient>>;
  beforeAll(async () => {
    client = await createMCPClient({ transport: { type: 'http', url: `${aptix.url}/mcp` } });
  });
  afterAll(async () => client?.close());

  it('negotiates 2026-07-28 by itself', () => {
    expect(client.initializeResult.protocolVersion).toBe('2026-07-28');
  });

  it("a direct call of another mode's tool without a session is refused, saying how to reach it; the list stays the same", async () => {
    const result = await client.callTool({ name: 'testing_delay', arguments: { milliseconds: 1 } });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: DIRECT_REFUSAL }]);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(SURFACE);
  });

  agentLoopSuite(
    aptix,
    async (steps) => {
      const script = new Script(steps);
      // The tool set is built from one listing, as an application does.
      const tools = await client.tools();
      const result = await generateText({
        model: aiSdkScriptedModel(script),
        tools,
        prompt: 'Try the diagnostics tools.',
        stopWhen: stepCountIs(steps.length),
      });
      return { script, output: result.text };
    },
    { era: 'modern', error: asIs, checksSchema: false, orders: 'AI-SDK' },
  );
});

describe('LangChain: @langchain/mcp-adapters 1.1 at /mcp, createAgent and a scripted chat model', () => {
  const aptix = aptixForSuite();
  // A client per test: its MCP session (2025) works in one agent session, which a test's mode change moves.
  let client: MultiServerMCPClient;
  beforeEach(() => {
    client = new MultiServerMCPClient({ mcpServers: { aptix: { transport: 'http', url: `${aptix.url}/mcp` } } });
  });
  afterEach(async () => client?.close());

  it('speaks 2025-11-25', async () => {
    const inner = (await client.getClient('aptix')) as unknown as { transport: { protocolVersion?: string } };
    expect(inner.transport.protocolVersion).toBe('2025-11-25');
  });

  agentLoopSuite(
    aptix,
    async (steps) => {
      const script = new Script(steps);
      const tools = await client.getTools();
      const agent = createAgent({ model: new LangChainScriptedModel(script), tools });
      const result = await agent.invoke(
        { messages: [{ role: 'user', content: 'Try the diagnostics tools.' }] },
        { recursionLimit: 2 * steps.length + 1 },
      );
      return { script, output: String(result.messages.at(-1)!.content) };
    },
    {
      era: 'legacy',
      // The adapter raises a ToolException for an isError result, and LangChain's ToolNode hands the model its message.
      error: (text) =>
        `ToolException: MCP tool 'aptix_call_tool' on server 'aptix' returned an error: ${text}\n Please fix your mistakes.`,
      checksSchema: true,
      orders: 'LANGCHAIN',
    },
  );
});

const python = spawnSync('python3', ['-c', 'import mcp'], { encoding: 'utf8' });
if (python.status !== 0) {
  if (process.env.CI === 'true')
    throw new Error(
      `The Python MCP SDK is required in CI (pip install 'mcp>=2.3,<3'): ${python.stderr || python.error?.message}`,
    );
  console.warn(
    "\n!!! python3 with the mcp package is not available: the Python MCP client tests are SKIPPED. Run `pip install 'mcp>=2.3,<3'` to run them. !!!\n",
  );
}

interface Seen {
  texts: string[];
  isError: boolean;
  meta: Record<string, any> | null;
}
interface PythonRun {
  protocolVersion: string;
  tools: string[];
  direct: Seen;
  sessionless: Seen;
  change: Seen;
  sessionId: string;
  toolsAfter: string[];
  invalid: Seen;
  delay: Seen;
  found: { mode: string; sessionId: string; tools: Array<{ name: string; usage: string }> };
  refund: Seen;
}

describe.skipIf(python.status !== 0)(
  'Python mcp 2.3 at /mcp (the script plays the model: the SDK has no agent loop)',
  () => {
    const aptix = aptixForSuite();
    const runPython = async (era: 'modern' | 'legacy'): Promise<PythonRun> => {
      const { stdout } = await promisify(execFile)(
        'python3',
        [join(WORKSPACE, 'e2e', 'test', 'clients', 'python_modes.py'), `${aptix.url}/mcp`, era],
        { timeout: 60_000 },
      );
      return JSON.parse(stdout.trim().split('\n').pop()!) as PythonRun;
    };

    /** What both eras show after the change: the new mode's tool through the pair, a named field, a gated call approved over HTTP. */
    async function expectWorkInNewMode(seen: PythonRun): Promise<void> {
      expect(JSON.parse(seen.change.texts[0]!)).toMatchObject({
        success: true,
        mode: 'tool_diagnostics',
        sessionId: seen.sessionId,
      });
      expect(seen.invalid).toMatchObject({ isError: true, texts: [INVALID_DELAY] });
      expect(seen.delay.isError).toBe(false);
      expect(JSON.parse(seen.delay.texts[0]!)).toMatchObject({ wasCancelled: false, sessionId: seen.sessionId });
      expect(seen.found).toMatchObject({ mode: 'tool_diagnostics', sessionId: seen.sessionId });
      expect(seen.found.tools[0]!.name).toBe('testing_issue_refund');

      expect(seen.refund.isError).toBe(false);
      expect(seen.refund.texts[0]).toContain("testing_issue_refund awaits a person's approval (approval ");
      const approvalId = approvalIdIn(seen.refund.texts[0]!);
      expect(seen.refund.meta?.['aptix/approval']).toEqual({ status: 'pending_approval', approvalId });
      expect(await approvalOf(aptix.url, approvalId)).toMatchObject({ status: 'pending', sessionId: seen.sessionId });
      expect((await approve(aptix.url, approvalId)).status).toBe('executed');
      expect(await approvalOf(aptix.url, approvalId)).toMatchObject({
        status: 'executed',
        result: { result: { status: 'refunded', sessionId: seen.sessionId } },
      });
    }

    it('default mode: negotiates 2026-07-28; refusals say how to reach the tool; after the change the list stays, the pair runs the new mode', async () => {
      const seen = await runPython('modern');
      expect(seen.protocolVersion).toBe('2026-07-28');
      expect(seen.tools).toEqual(SURFACE);
      expect(seen.direct).toMatchObject({ isError: true, texts: [DIRECT_REFUSAL] });
      expect(seen.sessionless).toMatchObject({ isError: true, texts: [SESSIONLESS_REFUSAL] });
      expect(seen.change.texts[1]).toBe(guidance.modern(seen.sessionId));
      expect(seen.toolsAfter).toEqual(SURFACE);
      await expectWorkInNewMode(seen);
    });

    it('legacy mode: 2025-11-25 in an MCP session bound to an agent session; the refusals name that session, and after the change a new listing shows the mode', async () => {
      const seen = await runPython('legacy');
      expect(seen.protocolVersion).toBe('2025-11-25');
      expect(seen.tools).toEqual(SURFACE);
      // The MCP session works in its own agent session, the one agent_change_mode then moves.
      const own = seen.sessionId;
      expect(seen.direct).toMatchObject({ isError: true });
      expect(seen.direct.texts).toEqual([legacyDirectRefusal(own)]);
      expect(seen.sessionless.texts).toEqual([legacySessionlessRefusal(own)]);
      expect(seen.change.texts[1]).toBe(guidance.legacy(own));
      expect(seen.toolsAfter).toEqual(
        expect.arrayContaining(['testing_delay', 'testing_issue_refund', 'aptix_call_tool']),
      );
      await expectWorkInNewMode(seen);
    });
  },
);

/**
 * The MCP Inspector CLI (0.15, the v1 SDK client inside: 2025-11-25). One `--cli` run is one MCP
 * session and one request, and it has no model, so it cannot run a multi-step agent loop: the test plays
 * the user, who reads each answer and types the next command. What carries from one run to the next is
 * the agent session id, as an argument of the pair. The CLI prints no protocol version; the era shows
 * in the host's 2025 wording (a session in every refusal, "If your tool list does not show…").
 */
describe('MCP Inspector CLI 0.15 at /mcp (--cli, tools/list and tools/call with --tool-arg)', () => {
  const aptix = aptixForSuite();
  const CLI = join(WORKSPACE, 'node_modules', '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js');
  const inspector = async (...args: string[]): Promise<any> => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, '--cli', `${aptix.url}/mcp`, ...args], {
      cwd: WORKSPACE,
      timeout: 60_000,
    });
    return JSON.parse(stdout);
  };
  const call = (tool: string, args: Record<string, unknown>) =>
    inspector(
      '--method',
      'tools/call',
      '--tool-name',
      tool,
      ...Object.entries(args).flatMap(([key, value]) => [
        '--tool-arg',
        `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
      ]),
    );
  const textsOf = (result: { content: Array<{ text: string }> }) => result.content.map((block) => block.text);

  it("lists the stable surface; changes mode in one run and runs the new mode's tools in later runs through the pair", async () => {
    expect((await inspector('--method', 'tools/list')).tools.map((tool: { name: string }) => tool.name)).toEqual(
      SURFACE,
    );

    const change = await call('agent_change_mode', {
      mode: 'tool_diagnostics',
      branch: false,
      reason: 'Try the diagnostics tools.',
    });
    const sessionId = JSON.parse(textsOf(change)[0]!).sessionId as string;
    expect(textsOf(change)[1]).toBe(guidance.legacy(sessionId));

    const found = JSON.parse(
      textsOf(await call('aptix_find_tools', { sessionId, query: 'reply with the same message' }))[0]!,
    );
    expect(found).toMatchObject({ mode: 'tool_diagnostics', sessionId });
    expect(found.tools[0].name).toBe('testing_ping_pong');
    const ping = await call('aptix_call_tool', {
      sessionId,
      name: 'testing_ping_pong',
      arguments: { message: 'hi', count: 2 },
    });
    expect(ping.isError ?? false).toBe(false);
    expect(JSON.parse(textsOf(ping)[0]!)).toMatchObject({ sessionId });

    const invalid = await call('aptix_call_tool', {
      sessionId,
      name: 'testing_delay',
      arguments: { milliseconds: 'soon' },
    });
    expect(invalid).toMatchObject({ isError: true, content: [{ text: INVALID_DELAY }] });

    const refund = await call('aptix_call_tool', {
      sessionId,
      name: 'testing_issue_refund',
      arguments: { orderId: 'INSPECTOR-1', amount: 5000, currency: 'EUR' },
    });
    const approvalId = approvalIdIn(textsOf(refund)[0]!);
    expect(refund._meta['aptix/approval']).toEqual({ status: 'pending_approval', approvalId });
    expect(await approvalOf(aptix.url, approvalId)).toMatchObject({ status: 'pending', sessionId });
    expect((await approve(aptix.url, approvalId)).status).toBe('executed');
    expect(await approvalOf(aptix.url, approvalId)).toMatchObject({
      status: 'executed',
      result: { result: { orderId: 'INSPECTOR-1', status: 'refunded', sessionId } },
    });
  });

  it("a mode's own URL ends in /mcp, so the CLI takes it for Streamable HTTP without --transport, and its session starts in that mode", async () => {
    const { stdout: listed } = await promisify(execFile)(
      process.execPath,
      [CLI, '--cli', `${aptix.url}/modes/tool_diagnostics/mcp`, '--method', 'tools/list'],
      { cwd: WORKSPACE, timeout: 60_000 },
    );
    expect(JSON.parse(listed).tools.map((tool: { name: string }) => tool.name)).toContain('testing_delay');
    const { stdout: ran } = await promisify(execFile)(
      process.execPath,
      [
        CLI,
        '--cli',
        `${aptix.url}/modes/tool_diagnostics/mcp`,
        '--method',
        'tools/call',
        '--tool-name',
        'testing_delay',
        '--tool-arg',
        'milliseconds=1',
      ],
      { cwd: WORKSPACE, timeout: 60_000 },
    );
    const result = JSON.parse(ran) as { isError?: boolean; content: Array<{ text: string }> };
    expect(result.isError ?? false).toBe(false);
    expect(JSON.parse(result.content[0]!.text)).toMatchObject({ wasCancelled: false });
  });

  it("lists and gets the prompts and reads the resources (each mode's guidance, each tool's guide, the mode catalog)", async () => {
    const prompts = (await inspector('--method', 'prompts/list')).prompts.map(
      (prompt: { name: string }) => prompt.name,
    );
    expect(prompts).toEqual(['mode_general', 'mode_ddr_authoring', 'mode_tool_diagnostics']);
    const guidance = await inspector('--method', 'prompts/get', '--prompt-name', 'mode_tool_diagnostics');
    expect(guidance.messages[0].content.text).toContain('# Current mode: Tool diagnostics (tool_diagnostics)');
    const resources = (await inspector('--method', 'resources/list')).resources.map(
      (resource: { uri: string }) => resource.uri,
    );
    expect(resources).toContain('aptix://modes');
    expect(resources).toContain('aptix://tools/testing_calculator/guide');
    const catalog = await inspector('--method', 'resources/read', '--uri', 'aptix://modes');
    expect(catalog.contents[0].text).toContain('tool_diagnostics');
  });

  it('refusals name what to do: a direct call in a new run is in a new session of the default mode', async () => {
    const direct = await call('testing_delay', { milliseconds: 1 });
    expect(direct.isError).toBe(true);
    const own = /\(session ([0-9a-f-]{36})\)/.exec(textsOf(direct)[0]!)?.[1];
    expect(textsOf(direct)).toEqual([legacyDirectRefusal(own!)]);
    const unknown = await call('aptix_call_tool', {
      sessionId: 'no-such-session',
      name: 'testing_delay',
      arguments: { milliseconds: 1 },
    });
    expect(textsOf(unknown)[0]).toContain(
      'Agent session "no-such-session" does not exist. Use the sessionId that agent_change_mode returned',
    );
  });
});
