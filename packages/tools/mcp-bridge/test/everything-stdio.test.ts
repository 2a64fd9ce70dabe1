import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExecutionErrorCode } from '@aptix/tool-contract';
import { verifyToolContract } from '@aptix/tool-contract/testing';
import { BridgeErrorCode, GENERATED_MARKER } from '../src/index.js';
import { bridgeHarness, EVERYTHING, text, progressListener } from './servers.js';

describe('server-everything over stdio', () => {
  let h: Awaited<ReturnType<typeof bridgeHarness>>;
  beforeAll(async () => {
    process.env.BRIDGE_TEST_HOST_SECRET = 'host-only-value';
    process.env.BRIDGE_TEST_TOKEN = 'token-from-the-environment';
    h = await bridgeHarness({
      name: 'everything',
      stdio: {
        command: process.execPath,
        args: [EVERYTHING, 'stdio'],
        env: { GREETING: 'hello', SERVICE_TOKEN: { env: 'BRIDGE_TEST_TOKEN' } },
      },
      reconnect: { initialDelayMs: 50, maxDelayMs: 500 },
    });
  });
  afterAll(() => h?.bridge.close());

  it('lists the server tools under the prefix, contract-checked by a real registry', () => {
    const names = h.registry.names();
    expect(names).toEqual(
      expect.arrayContaining([
        'everything_echo',
        'everything_get_sum',
        'everything_get_structured_content',
        'everything_trigger_long_running_operation',
      ]),
    );
    for (const name of names) expect(name).toMatch(/^everything_[a-z0-9]+(_[a-z0-9]+)*$/);
    const report = h.bridge.report();
    const research = report.find((tool) => tool.remoteName === 'simulate-research-query');
    expect(research?.offered).toBe(false);
    expect(research?.skipped.join(' ')).toContain('MCP task');
  });

  it('carries annotations over and marks the usage metadata as generated', () => {
    const echo = h.registry.get('everything_echo')!;
    expect(echo.annotations).toEqual({
      readOnlyHint: true,
      idempotentHint: true,
      destructiveHint: false,
      openWorldHint: false,
    });
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

  it('passes the contract kit, with only the expected warnings about the sections the server cannot describe', async () => {
    for (const name of ['everything_echo', 'everything_get_resource_reference']) {
      const report = await verifyToolContract(h.registry.get(name)!.toolClass, { dependencies: {} });
      expect(report.violations).toEqual([]);
      const warnings = report.warnings.map((warning) => warning.message);
      expect(warnings.length).toBeGreaterThan(0);
      for (const warning of warnings) expect(warning).toMatch(/"Good usage:"|"Bad usage:"/);
    }
  });

  it('gives properties the server left undescribed a generated description, and says so', () => {
    const reference = h.bridge.report().find((tool) => tool.remoteName === 'get-resource-reference')!;
    expect(reference.offered).toBe(true);
    expect(reference.notes.join(' ')).toContain('resourceType: the server gives no description');
    const parameters = h.registry.get('everything_get_resource_reference')!.parameters as {
      properties: Record<string, { description: string }>;
    };
    expect(parameters.properties.resourceType!.description).toContain("The 'resourceType' argument");
  });

  it('passes structured content through', async () => {
    const result = await h.call('everything_get_structured_content', { location: 'Chicago' });
    expect(result.successful).toBe(true);
    expect(result.value?.structuredContent).toEqual({
      temperature: 36,
      conditions: 'Light rain / drizzle',
      humidity: 82,
    });
  });

  it("refuses arguments the schema refuses before the server sees them, and turns the server's own error into REMOTE_TOOL_ERROR", async () => {
    const invalid = await h.call('everything_get_sum', { a: 'one', b: 2 });
    expect(invalid.errors[0]?.code).toBe(ExecutionErrorCode.INVALID_ARGUMENTS);
    const remote = await h.call('everything_get_resource_reference', { resourceType: 'Text', resourceId: -3 });
    expect(remote.successful).toBe(false);
    expect(remote.errors[0]).toEqual({
      code: BridgeErrorCode.REMOTE_TOOL_ERROR,
      message: expect.stringContaining('Invalid resourceId: -3'),
    });
  });

  it("forwards the caller's cancellation and answers that the call was cancelled", async () => {
    const controller = new AbortController();
    const listener = progressListener();
    const pending = h.call(
      'everything_trigger_long_running_operation',
      { duration: 20, steps: 20 },
      { signal: controller.signal },
      listener.context,
    );
    // Cancel once the server has reported progress: the call is running on the server by then. The
    // server's progress reaches the caller, and the log at debug.
    await vi.waitFor(() => expect(listener.reports[0]).toMatchObject({ progress: 1, total: 20 }), {
      timeout: 10_000,
      interval: 20,
    });
    expect(
      h.logger.events().some((event) => event.tag === '[everything_trigger_long_running_operation_Progress]'),
    ).toBe(true);
    controller.abort();
    const result = await pending;
    expect(result.successful).toBe(true);
    expect(result.value).toMatchObject({ wasCancelled: true, outcome: 'no_effect', sessionId: 's-1' });
    expect((await h.call('everything_echo', { message: 'after' })).successful).toBe(true);
  });

  it('asks the server for progress only when the caller listens', async () => {
    const before = h.logger.events().length;
    const quiet = await h.call('everything_trigger_long_running_operation', { duration: 0.3, steps: 3 });
    expect(quiet.successful).toBe(true);
    expect(
      h.logger
        .events()
        .slice(before)
        .some((event) => event.tag.endsWith('_Progress]')),
    ).toBe(false);
  });

  it("stops a call at Aptix's time-out, and the server keeps serving", async () => {
    const result = await h.call(
      'everything_trigger_long_running_operation',
      { duration: 20, steps: 2 },
      { timeoutMs: 300 },
    );
    expect(result.errors[0]?.code).toBe(ExecutionErrorCode.TIMEOUT);
    expect((await h.call('everything_echo', { message: 'still here' })).successful).toBe(true);
  });

  it("gives the server a safe default environment plus what the options name, never the host's", async () => {
    const result = await h.call('everything_get_env', {});
    const env = text(result.value);
    expect(env).toContain('GREETING');
    expect(env).toContain('token-from-the-environment');
    expect(env).not.toContain('host-only-value');
    expect(env).not.toContain('BRIDGE_TEST_HOST_SECRET');
  });

  it('answers REMOTE_UNAVAILABLE while a killed server is down, and reconnects by itself', async () => {
    const pid = h.bridge.pid!;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await vi.waitFor(() => expect(h.bridge.connected).toBe(false), { timeout: 10_000, interval: 10 });
    const during = await h.call('everything_echo', { message: 'anyone?' });
    // Usually the bridge is still reconnecting; if it is already back, the call simply works.
    if (!during.successful) expect(during.errors[0]?.code).toBe(BridgeErrorCode.REMOTE_UNAVAILABLE);
    await vi.waitFor(() => expect(h.bridge.connected).toBe(true), { timeout: 15_000, interval: 20 });
    expect(h.bridge.pid).not.toBe(pid);
    const after = await h.call('everything_echo', { message: 'back' });
    expect(text(after.value)).toBe('Echo: back');
    expect(h.logger.events().map((event) => event.tag)).toEqual(
      expect.arrayContaining(['[McpBridge_ConnectionLost]', '[McpBridge_Reconnected]']),
    );
  });
});
