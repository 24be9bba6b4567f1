import Router from '@koa/router';
import { jsonBody } from '../../libs/http/json-body.js';
import type { ApiDeps } from './api-deps.js';
import { announceChanges } from './announce-changes.js';
import { authenticate } from './authenticate.js';
import { destinationHealthRoutes } from './destinations/destination-health-routes.js';
import { destinationRoutes } from './destinations/destination-routes.js';
import { eventRoutes } from './events/event-routes.js';
import { routeRoutes } from './routes/route-routes.js';
import { sourceRoutes } from './sources/source-routes.js';
import { transferRoutes } from './transfer/transfer-routes.js';

/** The management API: `/api/*` behind API keys. */
export function apiRouter(deps: ApiDeps): Router {
  const api = new Router({ prefix: '/api' });
  api.use(authenticate(deps), jsonBody(), announceChanges(deps));
  // Transfer first: its literal `export`, `import` and `bulk` segments would otherwise match `/:id`.
  const resources = [
    transferRoutes(deps),
    sourceRoutes(deps),
    destinationRoutes(deps),
    destinationHealthRoutes(deps),
    routeRoutes(deps),
    eventRoutes(deps),
  ];
  for (const resource of resources) api.use(resource.routes());
  return api;
}
