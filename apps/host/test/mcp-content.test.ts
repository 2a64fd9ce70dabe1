/**
 * Content beyond JSON text and structured output on a real `aptix serve`, through real clients: the
 * v2 SDK client (2026-07-28), the v1 SDK client (2025-11-25) and HTTP invoke. The tools are in
 * test/fixtures/content-tools; a package with an invalid output schema must stop start-up.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_ROOT, runCli, scratch, startHostWithConfig, type RunningHost } from './support.js';

const FIXTURES = join(HOST_ROOT, 'test', 'fixtures');
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const CHART = [
  { type: 'text', text: 'Sales by month:' },
  { type: 'image', data: PNG, mimeType: 'image/png' },
  { type: 'resource', resource: { uri: 'file:///sales.csv', mimeType: 'text/csv', text: 'month,sales\njan,3' } },
];
const STATS_SCHEMA = {
  type: 'object',
  properties: {
    count: { type: 'integer', description: 'How many values.' },
    mean: { type: 'number', description: 'Their mean.' },
  },
  required: ['count', 'mean'],
  additionalProperties: false,
};

let host: RunningHost;
let space: ReturnType<typeof scratch>;
beforeAll(async () => {
  ({ host, space } = await startHostWithConfig({
    toolPackages: [
      '@aptix/tool-samples',
      '@aptix/tool-mode-catalog',
      '@aptix/tool-mode-change',
      join(FIXTURES, 'content-tools'),
    ],
  }));
});
afterAll(async () => {
  await host?.stop();
  space?.cleanup();
});

async function modern(): Promise<ModernClient> {
  const client = new ModernClient(
    { name: 'aptix-test-v2', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(new ModernTransport(new URL(`${host.url}/mcp`)));
  expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  return client;
}

async function legacy(): Promise<LegacyClient> {
  const client = new LegacyClient({ name: 'aptix-test-v1', version: '1.0.0' });
  const transport = new LegacyTransport(new URL(`${host.url}/mcp`));
  await client.connect(transport);
  expect(transport.protocolVersion).toBe('2025-11-25');
  return client;
}

for (const [era, connect] of [
  ['2026-07-28, the v2 SDK client', modern],
  ['2025-11-25, the v1 SDK client', legacy],
] as const) {
  describe(`content blocks and structured output over /mcp (${era})`, () => {
    it('receives text, an image and an embedded document as the content blocks the tool built', async () => {
      const client = await connect();
      try {
        const result = await client.callTool({ name: 'content_chart', arguments: { kind: 'chart' } });
        expect(result.isError).toBeFalsy();
        expect(result.content).toEqual(CHART);
        expect(result.structuredContent).toBeUndefined();
      } finally {
        await client.close();
      }
    });

    it('receives the same content blocks through aptix_call_tool, and a malformed one refused the same way', async () => {
      const client = await connect();
      try {
        const result = await client.callTool({
          name: 'aptix_call_tool',
          arguments: { name: 'content_chart', arguments: { kind: 'chart' } },
        });
        expect(result.isError).toBeFalsy();
        expect(result.content).toEqual(CHART);
        const bad = await client.callTool({
          name: 'aptix_call_tool',
          arguments: { name: 'content_chart', arguments: { kind: 'bad_base64' } },
        });
        expect(bad.isError).toBe(true);
        expect(JSON.stringify(bad.content)).not.toContain('this is not base64');
      } finally {
        await client.close();
      }
    });

    it('lists the output schema, and receives structuredContent beside the JSON text (the SDK client checks it against the schema)', async () => {
      const client = await connect();
      try {
        const { tools } = await client.listTools();
        expect(tools.find((tool) => tool.name === 'content_stats')?.outputSchema).toEqual(STATS_SCHEMA);
        expect(tools.find((tool) => tool.name === 'content_chart')).not.toHaveProperty('outputSchema');
        const result = await client.callTool({ name: 'content_stats', arguments: { values: [1, 2, 6] } });
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toEqual({ count: 3, mean: 3 });
        expect(result.content).toEqual([{ type: 'text', text: '{"count":3,"mean":3}' }]);
        // A tool without an output schema sends text only.
        const plain = await client.callTool({
          name: 'testing_calculator',
          arguments: { operation: 'add', a: 1, b: 2 },
        });
        expect(plain.structuredContent).toBeUndefined();
      } finally {
        await client.close();
      }
    });

    it('gets a failed result, never the value, when a result violates its output schema', async () => {
      const client = await connect();
      try {
        const result = await client.callTool({ name: 'content_stats', arguments: { values: [1], lie: true } });
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toBeUndefined();
        const [block] = result.content as Array<{ type: string; text: string }>;
        expect(block!.text).toContain(
          'content_stats returned a result that does not match its declared output schema (result.count must be integer)',
        );
      } finally {
        await client.close();
      }
    });

    it('gets a failed result naming the rule for bad base64, an unknown block type and a block over the size bound', async () => {
      const client = await connect();
      try {
        const expectations: Array<[string, RegExp]> = [
          ['bad_base64', /content block 0 \("image"\) has 'data' that is not valid base64/],
          [
            'unknown_type',
            /content block 0 \("video"\) has an unknown type; a block's type is one of text, image, audio, resource/,
          ],
          ['huge', /larger than this host's limit of 1048576 bytes \(its text and content blocks together\)/],
        ];
        for (const [kind, message] of expectations) {
          const result = await client.callTool({ name: 'content_chart', arguments: { kind } });
          expect(result.isError, kind).toBe(true);
          const blocks = result.content as Array<{ type: string; text: string }>;
          expect(blocks.map((block) => block.type)).toEqual(['text']);
          expect(blocks[0]!.text).toMatch(message);
        }
      } finally {
        await client.close();
      }
    });
  });
}

const execFileAsync = promisify(execFile);
const pythonAvailable = spawnSync('python3', ['-c', 'import mcp'], { encoding: 'utf8' }).status === 0;

describe.skipIf(!pythonAvailable && process.env.CI !== 'true')(
  'content blocks and structured output through the Python MCP SDK (a client from another code base)',
  () => {
    for (const [era, version] of [
      ['modern', '2026-07-28'],
      ['legacy', '2025-11-25'],
    ] as const) {
      it(`parses the image, the embedded document and structuredContent into its own types (${version})`, async () => {
        // Asynchronously: a spawnSync would stop this process's event loop for seconds, and its idle
        // keep-alive sockets would then outlive the host's keepAliveTimeout unnoticed (the next fetch fails).
        const run = await execFileAsync(
          'python3',
          [join(HOST_ROOT, 'test', 'clients', 'python_content_client.py'), `${host.url}/mcp`, era],
          { encoding: 'utf8', timeout: 60_000 },
        );
        const seen = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
        expect(seen.protocolVersion).toBe(version);
        expect(seen.outputSchema).toEqual(STATS_SCHEMA);
        expect(seen.chartIsError).toBe(false);
        expect(seen.chart).toEqual([
          { ...CHART[0], pythonType: 'TextContent' },
          { ...CHART[1], pythonType: 'ImageContent' },
          { ...CHART[2], pythonType: 'EmbeddedResource' },
        ]);
        expect(seen.structured).toEqual({ count: 3, mean: 3 });
        expect(seen.statsText).toEqual(['{"count":3,"mean":3}']);
      });
    }
  },
);

describe('a gated tool with content and an output schema, approved by the MCP client user', () => {
  it('answers the approved call with the image and structuredContent, as an ungated call would (2026-07-28 and 2025-11-25)', async () => {
    const approve = { action: 'accept', content: { decision: 'approve' } } as const;
    const v2 = new ModernClient(
      { name: 'aptix-test-v2', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } },
    );
    v2.setRequestHandler('elicitation/create', async () => approve as never);
    await v2.connect(new ModernTransport(new URL(`${host.url}/mcp`)));
    const v1 = new LegacyClient({ name: 'aptix-test-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    v1.setRequestHandler(ElicitRequestSchema, async () => approve as never);
    await v1.connect(new LegacyTransport(new URL(`${host.url}/mcp`)));
    try {
      for (const client of [v2, v1] as const) {
        await client.listTools(); // the SDK client checks structuredContent against the listed outputSchema
        const result = await client.callTool({ name: 'content_gated_plot', arguments: { values: [1, 2, 3] } });
        expect(result.isError).toBeFalsy();
        expect(result.content).toEqual([
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'text', text: '{"points":3}' },
        ]);
        expect(result.structuredContent).toEqual({ points: 3 });
        expect((result._meta as Record<string, { status: string }>)['aptix/approval']?.status).toBe('executed');
      }
    } finally {
      await v2.close();
      await v1.close();
    }
  });
});

describe('a gated tool with an output schema, called by clients that cannot be asked', () => {
  it('answers the waiting call as an error result naming the approval, which the SDK clients accept (it has no structuredContent yet)', async () => {
    const v2 = new ModernClient({ name: 'aptix-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await v2.connect(new ModernTransport(new URL(`${host.url}/mcp`)));
    const v1 = new LegacyClient({ name: 'aptix-test-v1', version: '1.0.0' });
    await v1.connect(new LegacyTransport(new URL(`${host.url}/mcp`)));
    try {
      for (const client of [v2, v1] as const) {
        await client.listTools(); // the SDK client checks results against the listed outputSchema
        const result = await client.callTool({ name: 'content_gated_plot', arguments: { values: [1, 2] } });
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toBeUndefined();
        const approval = (result._meta as Record<string, { status: string; approvalId: string }>)['aptix/approval'];
        expect(approval?.status).toBe('pending_approval');
        expect(JSON.stringify(result.content)).toContain(approval!.approvalId);
      }
    } finally {
      await v2.close();
      await v1.close();
    }
  });
});

describe('content blocks over HTTP invoke', () => {
  it('answers with the result (the text view) and the content blocks', async () => {
    const response = await fetch(`${host.url}/v1/tools/content_chart/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { kind: 'chart' } }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      successful: true,
      result: {
        content: [
          { type: 'text', text: 'Sales by month:' },
          { type: 'image', mimeType: 'image/png', bytes: 70 },
          { type: 'resource', uri: 'file:///sales.csv', mimeType: 'text/csv', text: 'month,sales\njan,3' },
        ],
      },
      errors: [],
      content: CHART,
    });
  });

  it('answers a structured result as plain JSON, and a schema violation as a failed result with OUTPUT_SCHEMA_MISMATCH', async () => {
    const invoke = (args: object) =>
      fetch(`${host.url}/v1/tools/content_stats/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: args }),
      }).then((r) => r.json());
    expect(await invoke({ values: [2, 4] })).toEqual({ successful: true, result: { count: 2, mean: 3 }, errors: [] });
    expect(await invoke({ values: [2], lie: true })).toEqual({
      successful: false,
      result: null,
      errors: [{ code: 'OUTPUT_SCHEMA_MISMATCH', message: expect.stringContaining('result.count must be integer') }],
    });
  });

  it('refuses bad base64 as MALFORMED_RESULT and sends none of it', async () => {
    const response = await fetch(`${host.url}/v1/tools/content_chart/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { kind: 'bad_base64' } }),
    });
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ successful: false, result: null, errors: [{ code: 'MALFORMED_RESULT' }] });
    expect(body).not.toHaveProperty('content');
  });
});

describe('an output schema that is not valid JSON Schema', () => {
  it('stops start-up with a message naming the tool and the fix', async () => {
    const dir = scratch();
    try {
      const config = join(dir.dir, 'aptix.config.json');
      writeFileSync(
        config,
        JSON.stringify({ db: `sqlite:${dir.db}`, toolPackages: [join(FIXTURES, 'broken', 'bad-output-schema')] }),
      );
      const run = await runCli(['--config', config, 'serve', '--port', '0']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('Tool "broken_output_schema"');
      expect(run.stderr).toContain(
        'OutputSchema is not a valid JSON Schema: OutputSchema.properties.total.type must be equal to one of the allowed values',
      );
      expect(run.stderr).toContain('Fix: declare it with TypeBox as an object');
      expect(run.stderr).not.toMatch(/\n\s+at\s/);
    } finally {
      dir.cleanup();
    }
  });
});

describe('content blocks and output schemas from a tool package isolated in workers', () => {
  it('pass from the worker to HTTP invoke unchanged, and the host checks the output schema again', async () => {
    const { host: isolated, space: dir } = await startHostWithConfig({
      toolPackages: [
        '@aptix/tool-samples',
        '@aptix/tool-mode-catalog',
        '@aptix/tool-mode-change',
        { package: join(FIXTURES, 'content-tools'), isolation: 'worker', workers: 1 },
      ],
    });
    try {
      const invoke = (tool: string, args: object) =>
        fetch(`${isolated.url}/v1/tools/${tool}/invoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ arguments: args }),
        }).then((r) => r.json());
      expect(await invoke('content_chart', { kind: 'chart' })).toMatchObject({ successful: true, content: CHART });
      expect(await invoke('content_stats', { values: [2, 4] })).toEqual({
        successful: true,
        result: { count: 2, mean: 3 },
        errors: [],
      });
      expect(await invoke('content_stats', { values: [2], lie: true })).toMatchObject({
        successful: false,
        errors: [{ code: 'OUTPUT_SCHEMA_MISMATCH' }],
      });
      const tool = (await fetch(`${isolated.url}/v1/tools/content_stats`).then((r) => r.json())) as {
        definitions: { mcp: { outputSchema?: unknown } };
      };
      expect(tool.definitions.mcp.outputSchema).toEqual(STATS_SCHEMA);
    } finally {
      await isolated.stop();
      dir.cleanup();
    }
  });
});
