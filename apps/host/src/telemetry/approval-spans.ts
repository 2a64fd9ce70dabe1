import { SpanKind, type Attributes, type Span } from '@opentelemetry/api';
import { inSpan, scopeTracer, tracingEnabled } from '@aptix/tool-contract';

const tracer = scopeTracer('@aptix/host');

/** The three steps of an approval: a gated call asks, a person decides, the host runs it. */
export type ApprovalStep = 'ask' | 'decide' | 'execute';

/**
 * Runs one step of an approval in a span `aptix.approval.<step>` (with `aptix.approval.id`, and
 * `gen_ai.tool.name` when known); `finish` adds what the step's result says. With tracing off it runs
 * `work` alone.
 */
export function tracedApproval<T>(
  step: ApprovalStep,
  attributes: Attributes,
  work: () => Promise<T>,
  finish: (span: Span, value: T) => void,
): Promise<T> {
  if (!tracingEnabled()) return work();
  return inSpan(tracer, `aptix.approval.${step}`, { kind: SpanKind.INTERNAL, attributes }, work, finish);
}
