import Router from '@koa/router';
import type { Context } from 'koa';
import { NotFoundError, UnavailableError } from '../../libs/errors/errors.js';
import type { ConsoleAsset, ConsoleAssets } from './console-assets.js';

/** The console calls its own origin's /api only; nothing else is loaded, framed or sent elsewhere. */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

function send(ctx: Context, asset: ConsoleAsset): void {
  ctx.set(SECURITY_HEADERS);
  ctx.set('Cache-Control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  ctx.set('Vary', 'Accept-Encoding');
  ctx.type = asset.contentType;
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = asset.gzip;
  } else {
    ctx.body = asset.body;
  }
}

/** What the console is told of the relay's settings: where an event's trace can be looked at. */
export interface ConsoleSettings {
  /** RELAY_TRACE_URL_TEMPLATE, `{traceId}` to be replaced; null when unset. */
  traceUrlTemplate: string | null;
}

/**
 * `/console`: the web console's static files, built by `npm ci`. Its pages are hash routes, so every
 * page is the one document at /console; it uses the public /api with the key the person signs in with.
 */
export function consoleRouter(assets: ConsoleAssets | undefined, settings: ConsoleSettings): Router {
  const router = new Router({ prefix: '/console' });
  router.get('/settings.json', (ctx) => {
    ctx.set(SECURITY_HEADERS);
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = settings;
  });
  router.get(['/', '/*rest'], (ctx) => {
    if (!assets) throw new UnavailableError('The console was not built: run `npm run build` (npm ci does it)');
    const path = ctx.path.slice('/console'.length) || '/';
    const asset = assets.get(path);
    if (!asset) throw new NotFoundError(`No console file at ${ctx.path}`, 'NOT_FOUND');
    send(ctx, asset);
  });
  return router;
}
