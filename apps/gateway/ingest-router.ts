import type { default as Router, RouterContext } from '@koa/router';
import { createRouter } from '../../libs/http/router.js';
import type { AdmissionGate } from '../../libs/concurrency/admission-gate.js';
import { isRelayError, OverloadedError } from '../../libs/errors/errors.js';
import { requestOrigin } from '../../libs/http/request-origin.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { clientAddress } from './client-address.js';
import { ingestDeadline, withRetryAfter } from './ingest-deadline.js';
import { ingestRequest, type IngestDeps } from './ingest-request.js';

export interface IngestRouterOptions {
  deps: IngestDeps;
  metrics: RelayMetrics;
  /** How many proxies in front of the gateway to trust for X-Forwarded-For (RELAY_TRUST_PROXY). */
  trustProxy: number;
  /** RELAY_PUBLIC_URL when set: the URL providers call, for signatures over it. */
  publicUrl?: string;
  /** The requests in hand at once (RELAY_INGEST_MAX_IN_FLIGHT); one past it is answered 503 OVERLOADED. */
  admission: AdmissionGate;
  /** How long one request may wait on the store and the broker in all (default INGEST_WAIT_BUDGET_MS). */
  waitBudgetMs?: number;
}

/** The URL the provider called (and signed, for `telecom`): RELAY_PUBLIC_URL wins over the request's origin. */
function calledUrl(options: IngestRouterOptions, ctx: RouterContext): string {
  return `${options.publicUrl ?? requestOrigin(ctx, options.trustProxy)}${ctx.originalUrl}`;
}

/** `POST /ingest/:org/:source`: the public endpoint providers call. */
export function ingestRouter(options: IngestRouterOptions): Router {
  const router = createRouter();
  router.post('/ingest/:org/:source', async (ctx) => {
    const release = options.admission.tryEnter();
    if (!release) {
      // Refused before any work, and on a connection kept open: a closed one would come back as a new
      // connection, to wait in the accept queue for a turn of this thread (docs/decisions/0042-one-accept-a-turn.md).
      options.metrics.ingestRequests.inc({ outcome: 'OVERLOADED' });
      options.metrics.ingestShed.inc({ reason: 'OVERLOADED' });
      throw new OverloadedError();
    }
    const stopTimer = options.metrics.ingestDuration.startTimer();
    let outcome = 'INTERNAL_ERROR';
    try {
      const result = await ingestRequest(options.deps, {
        orgSlug: ctx.params.org,
        sourceSlug: ctx.params.source,
        request: ctx.req,
        clientIp: clientAddress(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for'], options.trustProxy),
        publicUrl: calledUrl(options, ctx),
        path: ctx.path,
        querystring: ctx.querystring,
        deadline: ingestDeadline(options.waitBudgetMs),
        logContext: ctx.state,
      });
      outcome = result.status;
      ctx.body = result;
    } catch (error) {
      // The unread rest of a refused body must not be parsed as the next request on this connection.
      ctx.set('Connection', 'close');
      if (!isRelayError(error)) throw error;
      outcome = error.code;
      // Not durable, so not acknowledged: the provider is told when to try again (DESIGN "Unavailable answers").
      if (error.status === 503) options.metrics.ingestShed.inc({ reason: error.code });
      throw withRetryAfter(error);
    } finally {
      release();
      options.metrics.ingestRequests.inc({ outcome });
      stopTimer({ outcome });
    }
  });
  return router;
}
