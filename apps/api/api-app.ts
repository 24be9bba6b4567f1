import type Router from '@koa/router';
import type { ApiDeps } from './api-deps.js';
import { operationsRouter } from './api-operation.js';
import { API_OPERATIONS } from './api-operations.js';

/** The management API: `/api/*`, every operation behind an API key of the scope it needs (the document is public). */
export function apiRouter(deps: ApiDeps): Router {
  return operationsRouter(deps, API_OPERATIONS);
}
