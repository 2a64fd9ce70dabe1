import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOST_ROOT, hostForSuite } from './support.js';

const SCRIPT = join(HOST_ROOT, 'test', 'clients', 'python_client.py');
const probe = spawnSync('python3', ['-c', 'import mcp'], { encoding: 'utf8' });
const available = probe.status === 0;
if (!available) {
  if (process.env.CI === 'true')
    throw new Error(`The Python MCP SDK is required in CI (pip install mcp): ${probe.stderr || probe.error?.message}`);
  console.warn(
    '\n!!! python3 with the mcp package is not available: the Python MCP SDK client tests are SKIPPED. Run `pip install mcp` to run them. !!!\n',
  );
}

interface PythonRun {
  protocolVersion: string;
  tools: string[];
  sum: string;
  isError: boolean;
  unknownError: string | null;
  prompts: string[];
  guidance: string;
  resources: string[];
  guide: string;
}

/** What the Python client reads of the built-in prompts and resources (issue 37), the same on both revisions. */
function expectUnits(seen: PythonRun): void {
  expect(seen.prompts).toEqual(['mode_general', 'mode_ddr_authoring', 'mode_tool_diagnostics']);
  expect(seen.guidance).toContain('# Current mode: General (general)');
  expect(seen.resources).toEqual([
    'aptix://tools/agent_hello_world/guide',
    'aptix://tools/testing_calculator/guide',
    'aptix://tools/agent_list_modes/guide',
    'aptix://tools/agent_change_mode/guide',
    'aptix://modes',
  ]);
  expect(seen.guide).toMatch(/^testing_calculator — Usage Guide/);
}

function runPython(url: string, era: 'modern' | 'legacy'): PythonRun {
  const run = spawnSync('python3', [SCRIPT, url, era], { encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) throw new Error(`the Python client failed (${run.status}):\n${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as PythonRun;
}

describe.skipIf(!available)('MCP through the Python MCP SDK (a client from another code base)', () => {
  const host = hostForSuite();
  // /mcp lists the default mode's tools and the pair that reaches the other modes' tools (see mcp-discovery.test.ts).
  const MODE = ['agent_hello_world', 'testing_calculator', 'agent_list_modes', 'agent_change_mode'];
  const GENERAL = [...MODE, 'aptix_find_tools', 'aptix_call_tool'];

  it('speaks 2026-07-28 after server/discover: lists the mode, calls a tool, gets -32602 for an unknown one, gets the prompts and reads the resources', () => {
    const seen = runPython(`${host.url}/mcp`, 'modern');
    expect(seen.protocolVersion).toBe('2026-07-28');
    expect(seen.tools).toEqual(GENERAL);
    expect(JSON.parse(seen.sum)).toMatchObject({ value: 5, sessionId: null });
    expect(seen.unknownError).toContain(`Tools in mode "general": ${MODE.join(', ')}.`);
    expectUnits(seen);
  });

  it('speaks 2025-11-25 after initialize, in an agent session, and its DELETE (JSON content type, empty body) closes the session', async () => {
    const seen = runPython(`${host.url}/mcp`, 'legacy');
    expect(seen.protocolVersion).toBe('2025-11-25');
    expect(seen.tools).toEqual(GENERAL);
    expect(JSON.parse(seen.sum)).toMatchObject({ value: 5 });
    expect(JSON.parse(seen.sum).sessionId).toEqual(expect.any(String));
    expectUnits(seen);
    // The host's access line of the DELETE (one per request: method, URL, status), read from its stdout.
    const deleteAnswers = () =>
      host.host.logs
        .filter(
          (line) => line.msg === 'request completed' && line.method === 'DELETE' && String(line.url).startsWith('/mcp'),
        )
        .map((line) => line.statusCode);
    await expect.poll(deleteAnswers).toContain(200);
  });
});
