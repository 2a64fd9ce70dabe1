import { metrics, type ObservableResult } from '@opentelemetry/api';
import { meterInstruments } from '@aptix/tool-contract';

/**
 * Gauges of the host's MCP endpoint, read when metrics are collected (nothing on a request's path):
 * the open 2025 sessions and the resumable streams held. Returns the function that stops observing
 * (the endpoint closed). With no SDK registered the meter is a no-op and so is this.
 */
export function observeMcpEndpoint(state: { sessions(): number; streams(): number }): () => void {
  const meter = metrics.getMeter('@aptix/host');
  const sessions = meter.createObservableUpDownCounter('aptix.mcp.sessions', {
    description: 'MCP sessions (2025 revisions) open on this host.',
    unit: '{session}',
  });
  const streams = meter.createObservableUpDownCounter('aptix.mcp.streams', {
    description: 'Resumable MCP response streams (2025-11-25) this host holds for clients to resume.',
    unit: '{stream}',
  });
  const readSessions = (result: ObservableResult) => result.observe(state.sessions());
  const readStreams = (result: ObservableResult) => result.observe(state.streams());
  sessions.addCallback(readSessions);
  streams.addCallback(readStreams);
  return () => {
    sessions.removeCallback(readSessions);
    streams.removeCallback(readStreams);
  };
}

/** The most pending approvals a collection counts: the gauge reads at most this many rows. */
export const PENDING_APPROVALS_COUNTED = 1000;

/**
 * A gauge of the approvals waiting for a person, read from the store at each collection (every host
 * sharing a store reports the same figure). Returns the function that stops observing.
 */
export function observePendingApprovals(approvals: {
  list(filter: { status: 'pending'; limit: number }): Promise<readonly unknown[]>;
}): () => void {
  const gauge = metrics.getMeter('@aptix/host').createObservableGauge('aptix.approvals.pending', {
    description: `Approvals waiting for a decision in the session store (counted up to ${PENDING_APPROVALS_COUNTED}).`,
    unit: '{approval}',
  });
  const read = async (result: ObservableResult) => {
    try {
      result.observe((await approvals.list({ status: 'pending', limit: PENDING_APPROVALS_COUNTED })).length);
    } catch {
      // the store is unreachable now: no figure this time rather than a wrong one
    }
  };
  gauge.addCallback(read);
  return () => gauge.removeCallback(read);
}

const workerMetrics = meterInstruments('@aptix/host', (meter) =>
  meter.createCounter('aptix.worker.restarts', {
    description:
      'Workers of isolated tool packages ended and replaced (a crash, out of memory, stuck), by package and reason.',
    unit: '{restart}',
  }),
);

/** Counts a replaced worker of an isolated tool package (a no-op without an SDK). */
export function countWorkerRestart(toolPackage: string, reason: string): void {
  workerMetrics()?.add(1, { 'aptix.tool_package': toolPackage, 'aptix.worker.reason': reason });
}
