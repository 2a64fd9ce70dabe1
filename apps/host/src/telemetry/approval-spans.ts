import {
  context,
  isSpanContextValid,
  SpanKind,
  trace,
  type Attributes,
  type Link,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { inSpan, scopeTracer, tracingEnabled } from '@aptix/tool-contract';

const tracer = scopeTracer('@aptix/host');

/** The three steps of an approval: a gated call asks, a person decides, the host runs it. */
export type ApprovalStep = 'ask' | 'decide' | 'execute';

/** A W3C traceparent of version 00, the form {@link activeTraceparent} writes. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** What a link to the asking span says about itself. */
const ASKED_BY = { 'aptix.link.reason': 'approval.asked' } as const;

/**
 * Runs one step of an approval in a span `aptix.approval.<step>` (with `aptix.approval.id`, and
 * `gen_ai.tool.name` when known); `finish` adds what the step's result says. `asker` is the stored
 * traceparent of the span that asked: the step's span links to it, so a decision or an execution on
 * another host (or long after) leads back to the call that asked. With tracing off it runs `work` alone.
 */
export function tracedApproval<T>(
  step: ApprovalStep,
  attributes: Attributes,
  work: () => Promise<T>,
  finish: (span: Span, value: T) => void,
  asker?: string | null,
): Promise<T> {
  if (!tracingEnabled()) return work();
  const link = linkTo(asker);
  return inSpan(
    tracer,
    `aptix.approval.${step}`,
    link === undefined
      ? { kind: SpanKind.INTERNAL, attributes }
      : { kind: SpanKind.INTERNAL, attributes, links: [link] },
    work,
    finish,
  );
}

/**
 * The W3C traceparent of the span running now, to store with an approval it asks for; null when
 * nothing is traced (tracing off, or no valid span).
 */
export function activeTraceparent(): string | null {
  const span = trace.getSpan(context.active());
  const spanContext = span?.spanContext();
  if (spanContext === undefined || !isSpanContextValid(spanContext)) return null;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
}

/** A link to the span a stored traceparent names; undefined for none or one that is not valid. */
export function linkTo(traceparent: string | null | undefined): Link | undefined {
  if (traceparent === null || traceparent === undefined) return undefined;
  const parts = TRACEPARENT.exec(traceparent);
  if (parts === null) return undefined;
  const spanContext: SpanContext = {
    traceId: parts[1]!,
    spanId: parts[2]!,
    traceFlags: Number.parseInt(parts[3]!, 16),
    isRemote: true,
  };
  return isSpanContextValid(spanContext) ? { context: spanContext, attributes: ASKED_BY } : undefined;
}

/** Links `span` (a decision's, made before the approval was read) to the span that asked, when it was stored. */
export function linkToAsker(span: Span, traceparent: string | null | undefined): void {
  const link = linkTo(traceparent);
  if (link !== undefined) span.addLink(link);
}
