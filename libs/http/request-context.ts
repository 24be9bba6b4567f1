import type { Context, Next } from 'koa';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logging/logger.js';
import { logFields, type Span } from '../tracing/relay-tracer.js';

/**
 * What a request's log lines carry beyond the request (koa's `ctx.state`): the span a handler started,
 * so the access line and an unhandled error's line name the webhook's trace.
 */
export interface RequestLogContext {
  span?: Span;
}

const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (the caller's `X-Request-Id` when it is sane, else a new one), echoes it,
 * and writes one access line. Access lines are `debug`: at ingest rates `info` would drown the rest.
 * A 5xx is `warn`, except a shed (`OVERLOADED`): that is the relay working as meant, counted by
 * `relay_ingest_shed_total`, and a line each would add work exactly when there is none to spare.
 */
export function requestContext(logger: Logger) {
  return async function withRequestId(ctx: Context, next: Next): Promise<void> {
    const incoming = ctx.get('x-request-id');
    const requestId = ACCEPTABLE_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const startedAt = performance.now();
    try {
      await next();
    } finally {
      const level = ctx.status >= 500 && (ctx.body as { code?: unknown } | undefined)?.code !== 'OVERLOADED' ? 'warn' : 'debug';
      if (logger.isLevelEnabled(level)) {
        logger[level]({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round((performance.now() - startedAt) * 10) / 10, ...logFields((ctx.state as RequestLogContext).span) }, 'request');
      }
    }
  };
}
