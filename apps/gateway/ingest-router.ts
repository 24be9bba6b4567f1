import Router, { type RouterContext } from '@koa/router';
import { isRelayError } from '../../libs/errors/errors.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { clientAddress } from './client-address.js';
import { ingestRequest, type IngestDeps } from './ingest-request.js';

export interface IngestRouterOptions {
  deps: IngestDeps;
  metrics: RelayMetrics;
  /** How many proxies in front of the gateway to trust for X-Forwarded-For (RELAY_TRUST_PROXY). */
  trustProxy: number;
  /** RELAY_PUBLIC_URL when set: the URL providers call, for signatures over it. */
  publicUrl?: string;
}

function calledUrl(options: IngestRouterOptions, ctx: RouterContext): string {
  if (options.publicUrl) return `${options.publicUrl}${ctx.originalUrl}`;
  const forwarded = options.trustProxy > 0 ? ctx.get('x-forwarded-proto').split(',')[0]?.trim() : '';
  return `${forwarded || ctx.protocol}://${ctx.get('host')}${ctx.originalUrl}`;
}

/** `POST /ingest/:org/:source`: the public endpoint providers call. */
export function ingestRouter(options: IngestRouterOptions): Router {
  const router = new Router();
  router.post('/ingest/:org/:source', async (ctx) => {
    const stopTimer = options.metrics.ingestDuration.startTimer();
    let outcome = 'INTERNAL_ERROR';
    try {
      const result = await ingestRequest(options.deps, {
        orgSlug: ctx.params.org,
        sourceSlug: ctx.params.source,
        request: ctx.req,
        clientIp: clientAddress(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for'], options.trustProxy),
        publicUrl: calledUrl(options, ctx),
      });
      outcome = result.status;
      ctx.body = result;
    } catch (error) {
      if (isRelayError(error)) outcome = error.code;
      // The unread rest of a refused body must not be parsed as the next request on this connection.
      ctx.set('Connection', 'close');
      throw error;
    } finally {
      options.metrics.ingestRequests.inc({ outcome });
      stopTimer({ outcome });
    }
  });
  return router;
}
