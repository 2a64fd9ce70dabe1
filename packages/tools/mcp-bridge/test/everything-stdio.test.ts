import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GENERATED_MARKER } from '../src/index.js';
import { bridgeHarness, EVERYTHING, text } from './servers.js';

describe('server-everything over stdio', () => {
  let h: Awaited<ReturnType<typeof bridgeHarness>>;
  beforeAll(async () => {
    h = await bridgeHarness({ name: 'everything', stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'] }, reconnect: { initialDelayMs: 50, maxDelayMs: 500 } });
  });
  afterAll(() => h?.bridge.close());

  it('lists the server tools under the prefix, contract-checked by a real registry', () => {
    const names = h.registry.names();
    expect(names).toEqual(expect.arrayContaining(['everything_echo', 'everything_get_sum', 'everything_get_structured_content', 'everything_trigger_long_running_operation']));
    for (const name of names) expect(name).toMatch(/^everything_[a-z0-9]+(_[a-z0-9]+)*$/);
    const report = h.bridge.report();
    const research = report.find((tool) => tool.remoteName === 'simulate-research-query');
    expect(research?.offered).toBe(false);
    expect(research?.skipped.join(' ')).toContain('MCP task');
  });

  it('carries annotations over and marks the usage metadata as generated', () => {
    const echo = h.registry.get('everything_echo')!;
    expect(echo.annotations).toEqual({ readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false });
    expect(echo.usageMetadata).toContain(GENERATED_MARKER);
    expect(echo.usageMetadata).toContain('message (string, required): Message to echo');
    expect(echo.description).toBe('Echoes back the input string');
  });

  it('calls a tool and answers JSON with the content and the ids', async () => {
    const result = await h.call('everything_echo', { message: 'hi' });
    expect(result.successful).toBe(true);
    expect(text(result.value)).toBe('Echo: hi');
    expect(result.value).toMatchObject({ sessionId: 's-1', conversationId: 'c-1' });
  });
});
