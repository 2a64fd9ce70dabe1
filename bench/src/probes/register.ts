/**
 * Run in a fresh process by the start-up section: registers generated tools into an Aptix registry, or
 * into an MCP SDK McpServer, and prints one JSON line of timings (ms). A fresh process, so the first
 * figure is a real cold start: module-level caches empty, nothing compiled by the JIT yet.
 *
 * node --import tsx src/probes/register.ts aptix|sdk <count> <repeat>
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AgentToolRegistry } from '@aptix/tool-contract';
import { contractAjv } from '../host-deps.js';
import { z } from 'zod';
import { benchParameters, makeBenchTools } from '../../fixtures/many-tools.js';

const [kind = 'aptix', countText = '1000', repeatText = '9'] = process.argv.slice(2);
const count = Number(countText);
const repeat = Number(repeatText);
const now = () => performance.now();

async function connect(server: McpServer | Server): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'aptix-bench', version: '0.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

const out: Record<string, number[]> = {};
const record = (key: string, ms: number) => (out[key] ??= []).push(ms);

if (kind === 'aptix') {
  const tools = makeBenchTools(count);
  for (let i = 0; i < repeat; i++) {
    const registry = new AgentToolRegistry();
    let t = now();
    registry.registerTools(tools);
    record('register', now() - t);
    t = now();
    const first = registry.definitions('mcp');
    record('firstDefinitions', now() - t);
    t = now();
    const again = registry.definitions('mcp');
    record('cachedDefinitions', now() - t);
    if (again !== first || first.length !== count) throw new Error('definitions were not cached');
    // What an MCP tools/list of all of them costs end to end over the SDK's in-memory transport.
    if (i === repeat - 1) {
      const server = new Server({ name: 'bench', version: '0.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: registry.definitions('mcp') as never }));
      const client = await connect(server);
      for (let k = 0; k < 5; k++) {
        t = now();
        const listed = await client.listTools();
        record('mcpList', now() - t);
        if (listed.tools.length !== count) throw new Error(`listed ${listed.tools.length} tools`);
      }
      await client.close();
    }
  }
  // Eager compilation of every validator, as the registry would do without lazy compilation.
  const ajv = contractAjv();
  const t = now();
  for (let i = 0; i < count; i++) ajv.compile(benchParameters(i));
  record('eagerCompile', now() - t);
} else {
  for (let i = 0; i < repeat; i++) {
    const server = new McpServer({ name: 'bench', version: '0.0.0' });
    let t = now();
    for (let k = 0; k < count; k++) {
      const p = benchParameters(k);
      server.registerTool(
        `bench_tool_${String(k).padStart(4, '0')}`,
        {
          description: `Generated tool ${k}: looks up a query and answers with what it found.`,
          inputSchema: {
            query: z
              .string()
              .min(1)
              .max(p.properties.query!.maxLength as number)
              .describe(p.properties.query!.description as string),
            limit: z
              .number()
              .int()
              .min(1)
              .max(100)
              .optional()
              .describe('How many results to return, 1 to 100; 10 when omitted.'),
            mode: z
              .enum(p.properties.mode!.enum as [string, ...string[]])
              .optional()
              .describe('How hard to look.'),
            tags: z.array(z.string().min(1)).optional().describe('Tags the results must carry.'),
            ...(k % 3 === 0
              ? { since: z.iso.datetime().optional().describe('Only results newer than this time.') }
              : {}),
          },
        },
        async ({ query }) => ({ content: [{ type: 'text' as const, text: JSON.stringify({ query }) }] }),
      );
    }
    const client = await connect(server);
    const first = await client.listTools();
    record('registerAndFirstList', now() - t);
    if (first.tools.length !== count) throw new Error(`listed ${first.tools.length} tools`);
    t = now();
    await client.listTools();
    record('laterList', now() - t);
    await client.close();
  }
}
process.stdout.write(`${JSON.stringify(out)}\n`);
