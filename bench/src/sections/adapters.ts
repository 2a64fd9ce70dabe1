/**
 * 7. Framework adapters: a `testing_ping_pong` call through `@aptix/ai-sdk`, `@aptix/langchain` and
 * `@aptix/openai-agents`, each against the framework's own `tool()` wrapping the same function, with
 * its schema written in zod as the framework's docs show, in the same run and through the same entry:
 * - AI SDK: one step of `generateText` (the AI SDK's mock model asks for the call, the tool runs, the step ends);
 * - LangChain: `tool.invoke(toolCall)`, what a LangChain agent's tool node calls, answering a ToolMessage;
 * - Agents SDK: `invokeFunctionTool` with the model's JSON arguments, what the runner calls.
 */
import { createAiSdkTools } from '@aptix/ai-sdk';
import { createLangChainTools } from '@aptix/langchain';
import { createAgentsTools } from '@aptix/openai-agents';
import { PingPongTool } from '@aptix/tool-samples';
import type { ToolMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import { invokeFunctionTool, RunContext, tool as agentsTool, type FunctionTool } from '@openai/agents';
import { generateText, stepCountIs, tool as aiTool, type ToolSet } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { PING_ARGS, PING_JSON, pong } from '../fixtures.js';
import { compare, type Subject } from '../harness.js';
import type { Row } from '../report.js';

const SECTION =
  "7. Framework adapters (testing_ping_pong): a call through the adapter against the framework's own tool()";
const NAME = 'testing_ping_pong';
const DESCRIPTION = PingPongTool.getSchema().description;
const pingSchema = () => z.object({ message: z.string().min(1), count: z.number().int().min(1).max(10).optional() });
/** The adapters run without a session, so the tool sees an empty context: the hand-written tools get the same. */
const ping = (args: { message: string; count?: number }) => pong(args, {});

let sink: unknown;

export async function adaptersSection(log: (line: string) => void): Promise<Row[]> {
  // AI SDK: the same mock model answers both tool sets with one call of testing_ping_pong.
  const model = new MockLanguageModelV4({
    doGenerate: async () => ({
      content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: NAME, input: PING_JSON }],
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 1, text: 1, reasoning: undefined },
      },
      warnings: [],
    }),
  });
  const aiAptix = (await createAiSdkTools({ tools: [PingPongTool] })).tools;
  const aiOwn: ToolSet = {
    [NAME]: aiTool({ description: DESCRIPTION, inputSchema: pingSchema(), execute: async (args) => ping(args) }),
  };
  const aiStep = (tools: ToolSet) => generateText({ model, tools, stopWhen: stepCountIs(1), prompt: 'ping' });

  // LangChain: a tool call as a LangChain agent's tool node hands it over.
  const lcAptix = (await createLangChainTools({ tools: [PingPongTool] })).tools[0]!;
  const lcOwn = langchainTool(async (args: { message: string; count?: number }) => JSON.stringify(ping(args)), {
    name: NAME,
    description: DESCRIPTION,
    schema: pingSchema(),
  });
  const toolCall = { type: 'tool_call' as const, id: 'call-1', name: NAME, args: PING_ARGS };

  // Agents SDK: the model's JSON arguments, as the runner hands them over.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const agentsAptix = (await createAgentsTools({ tools: [PingPongTool] })).tools[0]! as FunctionTool<any, any, any>;
  const agentsOwn = agentsTool({
    name: NAME,
    description: DESCRIPTION,
    parameters: pingSchema(),
    execute: async (args) => JSON.stringify(ping(args)),
  });
  const runContext = new RunContext();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const agentsCall = (tool: FunctionTool<any, any, any>) =>
    invokeFunctionTool({ tool, runContext, input: PING_JSON, details: {} });

  // Sanity: both sides of each pair answer the same before they are timed.
  const expected = ping(PING_ARGS);
  const same = (who: string, got: unknown) => {
    if (JSON.stringify(got) !== JSON.stringify(expected))
      throw new Error(`${who} answered ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
  };
  same('AI SDK, Aptix', (await aiStep(aiAptix)).toolResults[0]?.output);
  same('AI SDK, own', (await aiStep(aiOwn)).toolResults[0]?.output);
  same('LangChain, Aptix', JSON.parse(((await lcAptix.invoke(toolCall)) as ToolMessage).content as string));
  same('LangChain, own', JSON.parse((await lcOwn.invoke(toolCall)).content as string));
  same('Agents SDK, Aptix', JSON.parse((await agentsCall(agentsAptix)) as string));
  same('Agents SDK, own', JSON.parse((await agentsCall(agentsOwn)) as string));

  const asyncLoop = (name: string, once: () => Promise<unknown>): Subject => ({
    name,
    async run(n) {
      for (let i = 0; i < n; i++) sink = await once();
    },
  });
  const pairs: Array<[string, Subject, Subject]> = [
    [
      'AI SDK generateText step',
      asyncLoop('@aptix/ai-sdk', () => aiStep(aiAptix)),
      asyncLoop("ai's tool() with zod", () => aiStep(aiOwn)),
    ],
    [
      'LangChain tool.invoke(toolCall)',
      asyncLoop('@aptix/langchain', () => lcAptix.invoke(toolCall)),
      asyncLoop("@langchain/core's tool() with zod", () => lcOwn.invoke(toolCall)),
    ],
    [
      'Agents SDK invokeFunctionTool',
      asyncLoop('@aptix/openai-agents', () => agentsCall(agentsAptix)),
      asyncLoop("@openai/agents' tool() with zod", () => agentsCall(agentsOwn)),
    ],
  ];
  const rows: Row[] = [];
  for (const [entry, aptix, own] of pairs) {
    log(`  adapters: ${entry}`);
    const [aptixTiming, ownTiming] = await compare([aptix, own], { rounds: 11, roundMs: 50 });
    rows.push({
      section: SECTION,
      measure: `${entry}: ${aptix.name}`,
      figure: aptixTiming!.opsPerSec,
      unit: 'calls/s',
      baseline: { name: own.name, figure: ownTiming!.opsPerSec },
      goal: { kind: 'ratio-at-least', value: 0.9 },
      note: `${(aptixTiming!.nsPerOp / 1000).toFixed(1)} µs against ${(ownTiming!.nsPerOp / 1000).toFixed(1)} µs per call.`,
    });
  }
  void sink;
  return rows;
}
