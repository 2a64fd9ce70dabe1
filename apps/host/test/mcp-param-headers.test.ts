/**
 * SEP-2243 through a real `aptix serve`: a tool parameter marked `x-mcp-header` travels in an
 * `Mcp-Param-*` header too. The v2 SDK client sends it by itself; a request whose header is missing,
 * badly encoded or different from the argument is refused with 400 / -32020 before the tool runs,
 * whatever a gateway in front made of it. 2025-era clients are not asked for the header.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredHostForSuite, connectV1, connectV2, FIRST_PARTY } from './mcp-host.js';
import { HOST_ROOT } from './support.js';

const FIXTURES = join(HOST_ROOT, 'test', 'fixtures');
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

const suite = configuredHostForSuite({ toolPackages: [...FIRST_PARTY, join(FIXTURES, 'routed-tools')] });

/** A 2026-07-28 tools/call as a client or a gateway would send it, with these extra headers. */
async function rawCall(
  args: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${suite.host.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'routed_lookup',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'routed_lookup', arguments: args, _meta: ENVELOPE },
    }),
  });
  const text = await response.text();
  const data = text.startsWith('{') ? JSON.parse(text) : JSON.parse(/^data: (.+)$/m.exec(text)![1]!);
  return { status: response.status, body: data };
}

const refusedBeforeRunning = (answer: { status: number; body: any }, header: string, words: RegExp) => {
  expect(answer.status).toBe(400);
  expect(answer.body.error.code).toBe(-32020);
  expect(answer.body.error.message).toMatch(words);
  expect(answer.body.error.message).toContain(header);
  expect(answer.body.error.message).toContain('Fix:');
  expect(answer.body.error.data).toEqual({ mismatch: { header, body: expect.any(String) } });
};
const ranFor = (orderId: string) =>
  suite.host.logs.filter((line) => line.tag === '[routed_lookup_Ran]' && line.OrderId === orderId).length;

/** Log lines arrive a little after the answers: a valid call's line, once seen, shows the earlier ones are in too. */
async function expectNeverRan(orderIds: readonly string[]): Promise<void> {
  const control = `control-${Math.random().toString(36).slice(2)}`;
  expect((await rawCall({ region: 'eu', orderId: control }, { 'mcp-param-region': 'eu' })).status).toBe(200);
  for (let attempt = 0; attempt < 200 && ranFor(control) === 0; attempt++)
    await new Promise((resolve) => setTimeout(resolve, 25));
  expect(ranFor(control)).toBe(1);
  for (const orderId of orderIds) expect(ranFor(orderId), orderId).toBe(0);
}

describe('Mcp-Param headers (SEP-2243)', () => {
  it('lists the annotation, and the v2 SDK client sends the headers itself: the call runs', async () => {
    const client = await connectV2(`${suite.host.url}/mcp`, 'aptix-test-v2', 'auto');
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const tool = (await client.listTools()).tools.find((listed) => listed.name === 'routed_lookup')!;
      expect((tool.inputSchema.properties as Record<string, Record<string, unknown>>).region!['x-mcp-header']).toBe(
        'Region',
      );
      const result = await client.callTool({
        name: 'routed_lookup',
        arguments: { region: 'eu-west', shard: 4, orderId: 'A-1' },
      });
      expect(result.isError).toBeFalsy();
      expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual({
        seen: { region: 'eu-west', shard: 4, orderId: 'A-1' },
      });
      // Text outside ASCII goes Base64-encoded, and still agrees.
      const accented = await client.callTool({
        name: 'routed_lookup',
        arguments: { region: 'Zürich — Ω', orderId: 'A-2' },
      });
      expect(accented.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('accepts a literal header, a Base64 one, surrounding spaces, and an integer written as 4.0', async () => {
    expect((await rawCall({ region: 'eu', orderId: 'A' }, { 'mcp-param-region': 'eu' })).status).toBe(200);
    expect(
      (
        await rawCall(
          { region: 'eu', orderId: 'A' },
          { 'Mcp-Param-Region': `=?base64?${Buffer.from('eu').toString('base64')}?=` },
        )
      ).status,
    ).toBe(200);
    expect((await rawCall({ region: 'eu', orderId: 'A' }, { 'MCP-PARAM-REGION': '  eu  ' })).status).toBe(200);
    expect(
      (await rawCall({ region: 'eu', shard: 4, orderId: 'A' }, { 'mcp-param-region': 'eu', 'mcp-param-shard': '4.0' }))
        .status,
    ).toBe(200);
  });

  it('refuses a missing header, naming it', async () => {
    refusedBeforeRunning(
      await rawCall({ region: 'eu', orderId: 'M' }, {}),
      'Mcp-Param-Region',
      /header is missing, but the arguments carry region="eu"/,
    );
    refusedBeforeRunning(
      await rawCall({ region: 'eu', shard: 2, orderId: 'M' }, { 'mcp-param-region': 'eu' }),
      'Mcp-Param-Shard',
      /missing/,
    );
    await expectNeverRan(['M']);
  });

  it('refuses a header that disagrees with the argument: a gateway routed the call somewhere else than the tool would act', async () => {
    refusedBeforeRunning(
      await rawCall({ region: 'us-east', orderId: 'M' }, { 'mcp-param-region': 'eu-west' }),
      'Mcp-Param-Region',
      /says "eu-west", but the arguments carry region="us-east"/,
    );
    refusedBeforeRunning(
      await rawCall({ region: 'eu', orderId: 'M' }, { 'mcp-param-region': 'EU' }),
      'Mcp-Param-Region',
      /says "EU"/,
    );
    refusedBeforeRunning(
      await rawCall({ region: 'eu', shard: 4, orderId: 'M' }, { 'mcp-param-region': 'eu', 'mcp-param-shard': '4x' }),
      'Mcp-Param-Shard',
      /says "4x"/,
    );
    await expectNeverRan(['M']);
  });

  it('refuses Base64 that is not canonical, or not UTF-8, rather than guess', async () => {
    for (const bad of [
      '=?base64?SGVsbG8?=',
      '=?base64?SGVs!!!bG8=?=',
      `=?base64?${Buffer.from([0xff, 0xfe, 0xfd]).toString('base64')}?=`,
    ]) {
      refusedBeforeRunning(
        await rawCall({ region: 'Hello', orderId: 'M' }, { 'mcp-param-region': bad }),
        'Mcp-Param-Region',
        /not canonical Base64/,
      );
    }
    await expectNeverRan(['M']);
  });

  it('expects no header for an argument that is absent', async () => {
    expect(
      (await rawCall({ region: 'eu', orderId: 'A' }, { 'mcp-param-region': 'eu', 'mcp-param-shard': '99' })).status,
    ).toBe(200);
  });

  it('asks 2025-era clients, which know no such headers, for nothing', async () => {
    const client = await connectV1(`${suite.host.url}/mcp`, 'aptix-test-v1');
    try {
      const result = await client.callTool({ name: 'routed_lookup', arguments: { region: 'eu', orderId: 'A-3' } });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});
