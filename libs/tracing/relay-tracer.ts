import { INVALID_SPAN_CONTEXT, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Link, type Span, type SpanContext } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from '../config/config.js';

export { SpanKind, type Span };

/** The W3C header that carries a webhook's trace context, on broker records and on delivery requests. */
export const TRACEPARENT_HEADER = 'traceparent';

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** When the span began (epoch ms), for a wait that is only seen once it is over (a retry tier's). */
  startTime?: number;
  links?: Link[];
}

/**
 * The tracer a process's roles share. Spans continue the context a record or request carries, passed
 * explicitly: no context manager, so nothing depends on async hooks and nothing is global.
 */
export interface RelayTracer {
  /** A span under `parent` (a `traceparent` value) when it is a valid one, else the first of a new trace. */
  start(name: string, parent: string | undefined, options?: SpanOptions): Span;
  /** Exports what is buffered and stops. */
  close(): Promise<void>;
}

/** The `traceparent` value naming `span` as the parent; none for a span of no trace (OTEL_SDK_DISABLED, no sender's context). */
export function traceparentOf(span: Span): string | undefined {
  const context = span.spanContext();
  if (!trace.isSpanContextValid(context)) return undefined;
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The trace id `span` belongs to, if it belongs to one. */
export function traceIdOf(span: Span): string | undefined {
  const context = span.spanContext();
  return trace.isSpanContextValid(context) ? context.traceId : undefined;
}

/**
 * The trace and span ids a log line written under `span` carries (none without a span). Log lines get
 * them from the span their work was handed, never from a context manager: AsyncLocalStorage on Node 20
 * makes every promise dearer (docs/decisions/0097-log-lines-carry-the-span.md).
 */
export function logFields(span: Span | undefined): { traceId?: string; spanId?: string } {
  const context = span?.spanContext();
  if (context === undefined || !trace.isSpanContextValid(context)) return {};
  return { traceId: context.traceId, spanId: context.spanId };
}

/** Ends `span` as failed with `error`'s message (never its stack: spans leave the relay). */
export function endFailed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  span.end();
}

/** The valid span context of a `traceparent` value, if it is one (a sender's header is untrusted input). */
export function parentContext(traceparent: string | undefined): SpanContext | undefined {
  if (traceparent === undefined || traceparent.length > 512) return undefined;
  const parsed = parseTraceParent(traceparent);
  return parsed && trace.isSpanContextValid(parsed) ? parsed : undefined;
}

/**
 * With no endpoint nothing is recorded: the SDK's always-off sampler still gives each span real random
 * ids, so every record and delivery carries a real `traceparent`, at the cost of two random ids a span.
 */
function providerFor(config: TracingConfig): BasicTracerProvider {
  const resource = resourceFromAttributes({ 'service.name': config.serviceName });
  if (config.tracesEndpoint === undefined) return new BasicTracerProvider({ resource, sampler: new AlwaysOffSampler() });
  return new BasicTracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesEndpoint }))],
  });
}

/**
 * OTEL_SDK_DISABLED: no SDK, so spans are the API's non-recording wrappers of the parent's context: a
 * sender's `traceparent` is passed on as it came, and a webhook without one carries none.
 */
const sdkFreeTracer: RelayTracer = {
  start: (_name, parent) => trace.wrapSpanContext(parentContext(parent) ?? INVALID_SPAN_CONTEXT),
  close: async () => undefined,
};

export function createRelayTracer(config: TracingConfig): RelayTracer {
  if (config.sdkDisabled) return sdkFreeTracer;
  const provider = providerFor(config);
  const tracer = provider.getTracer('webhook-relay');
  return {
    start(name, parent, options = {}) {
      const parentSpan = parentContext(parent);
      const context = parentSpan ? trace.setSpanContext(ROOT_CONTEXT, parentSpan) : ROOT_CONTEXT;
      return tracer.startSpan(name, { kind: options.kind, attributes: options.attributes, startTime: options.startTime, links: options.links }, context);
    },
    close: () => provider.shutdown(),
  };
}
