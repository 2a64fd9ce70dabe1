import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReasoner, toServerSentEvent, type ReasonerEvent } from '../src/index.js';
import { call, respond } from '../src/testing/index.js';
import { createHarness, eventLog, type Harness } from './support/harness.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

type Progress = Extract<ReasonerEvent, { type: 'tool_call_progress' }>;

describe("a tool's progress during a turn", () => {
  it('arrives as tool_call_progress events naming the call, between its start and its finish', async () => {
    const session = await h.store.createSession({ mode: 'diagnostics' });
    h.server.script(
      respond(
        undefined,
        call('c_wait', 'testing_delay', { milliseconds: 200 }),
        call('c_ping', 'testing_ping_pong', { message: 'hi' }),
      ),
      respond('Done waiting.'),
    );
    const log = eventLog();

    const result = await h.reasoner.runTurn(session.id, 'Wait a moment.', { onEvent: log.onEvent });

    expect(result.status).toBe('completed');
    const progress = log.events.filter((event): event is Progress => event.type === 'tool_call_progress');
    expect(progress.length).toBeGreaterThan(1);
    for (const event of progress)
      expect(event).toMatchObject({ sessionId: session.id, callId: 'c_wait', name: 'testing_delay', total: 200 });
    expect(progress[0]).toMatchObject({ progress: 0, message: 'waiting 200 ms' });
    expect(progress.at(-1)!.progress).toBe(200);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    const types = log.events.map((event) =>
      event.type === 'tool_call_progress' || event.type === 'tool_call_finished' || event.type === 'tool_call_started'
        ? `${event.type}:${event.callId}`
        : event.type,
    );
    const started = types.indexOf('tool_call_started:c_wait');
    const finished = types.indexOf('tool_call_finished:c_wait');
    expect(types.indexOf('tool_call_progress:c_wait')).toBeGreaterThan(started);
    expect(types.lastIndexOf('tool_call_progress:c_wait')).toBeLessThan(finished);
    // Plain JSON, so a host forwards it as a server-sent event as it is.
    expect(toServerSentEvent(progress[0]!)).toBe(`event: tool_call_progress\ndata: ${JSON.stringify(progress[0])}\n\n`);
  });

  it('gives the tool no reportProgress when nobody listens to the turn', async () => {
    const session = await h.store.createSession({ mode: 'diagnostics' });
    const seen: Array<unknown> = [];
    const reasoner = createReasoner({
      ...h.options,
      executor: {
        execute(name, args, context, options) {
          seen.push(typeof context?.reportProgress);
          return h.executor.execute(name, args, context, options);
        },
      },
    });
    h.server.script(
      respond(undefined, call('c_wait', 'testing_delay', { milliseconds: 1 })),
      respond('ok'),
      respond(undefined, call('c_wait2', 'testing_delay', { milliseconds: 1 })),
      respond('ok'),
    );
    await reasoner.runTurn(session.id, 'Wait.');
    await reasoner.runTurn(session.id, 'Wait again.', { onEvent: () => {} });
    expect(seen).toEqual(['undefined', 'function']);
  });

  it('bounds a flood and drops reports after the call answered', async () => {
    const session = await h.store.createSession({ mode: 'diagnostics' });
    let late: (() => void) | undefined;
    const reasoner = createReasoner({
      ...h.options,
      executor: {
        async execute(name, args, context, options) {
          const report = context!.reportProgress!;
          report({ progress: Number.NaN });
          report({ progress: Infinity });
          for (let i = 1; i <= 100_000; i++) report({ progress: i, total: 100_000, message: 'y'.repeat(5000) });
          late = () => report({ progress: 1e9, message: 'after the result' });
          return h.executor.execute(name, args, context, options);
        },
      },
    });
    h.server.script(respond(undefined, call('c_flood', 'testing_ping_pong', { message: 'hi' })), respond('ok'));
    const log = eventLog();
    const started = performance.now();
    await reasoner.runTurn(session.id, 'Flood.', { onEvent: log.onEvent });
    const seconds = (performance.now() - started) / 1000;
    late!();
    const progress = log.events.filter((event): event is Progress => event.type === 'tool_call_progress');
    // The burst, then the rate over the turn's length, then the last report waiting: never the 100,000.
    expect(progress.length).toBeLessThanOrEqual(16 + Math.ceil(20 * seconds) + 1);
    expect(progress[0]).toMatchObject({ progress: 1, total: 100_000 });
    expect(progress[0]!.message).toHaveLength(1000);
    expect(progress.at(-1)!.progress).toBe(100_000);
    expect(JSON.stringify(log.events)).not.toContain('after the result');
  });
});
