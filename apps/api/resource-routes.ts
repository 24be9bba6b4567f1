import Router from '@koa/router';
import type { z } from 'zod';
import { pageEnvelope } from '../../libs/http/validate.js';
import type { PageQuery } from '../../libs/store/org-scoped-repository.js';
import type { ApiDeps, Tenant } from './api-deps.js';
import { parseBody, parseQuery, tenantOf } from './request-input.js';

/** One resource's schemas and domain functions: what its list, create, get, patch and delete routes call. */
export interface ResourceCrud<ListQuery extends z.ZodType<PageQuery>, Create extends z.ZodType, Patch extends z.ZodType> {
  /** URL segment under `/api`, e.g. `sources`. */
  collection: string;
  listQuery: ListQuery;
  createSchema: Create;
  patchSchema: Patch;
  /** Fields the API returns but never takes; dropped from bodies, so a fetched resource can be sent back. */
  readOnly: readonly string[];
  list(deps: ApiDeps, tenant: Tenant, query: z.output<ListQuery>): Promise<{ rows: unknown[]; total: number }>;
  create(deps: ApiDeps, tenant: Tenant, input: z.output<Create>): Promise<unknown>;
  get(deps: ApiDeps, tenant: Tenant, id: string): Promise<unknown>;
  update(deps: ApiDeps, tenant: Tenant, id: string, patch: z.output<Patch>): Promise<unknown>;
  remove(deps: ApiDeps, tenant: Tenant, id: string): Promise<void>;
}

/**
 * `GET /` (paginated envelope), `POST /` (201), `GET /:id`, `PATCH /:id` and `DELETE /:id` (204) of one
 * resource; the caller adds the resource's own routes to the returned router.
 */
export function resourceRoutes<ListQuery extends z.ZodType<PageQuery>, Create extends z.ZodType, Patch extends z.ZodType>(
  deps: ApiDeps,
  resource: ResourceCrud<ListQuery, Create, Patch>,
): Router {
  const router = new Router({ prefix: `/${resource.collection}` });
  router.get('/', async (ctx) => {
    const query = parseQuery(ctx, resource.listQuery);
    const page = await resource.list(deps, tenantOf(ctx), query);
    ctx.body = pageEnvelope(page.rows, page.total, query);
  });
  router.post('/', async (ctx) => {
    ctx.status = 201;
    ctx.body = await resource.create(deps, tenantOf(ctx), parseBody(ctx, resource.createSchema, resource.readOnly));
  });
  router.get('/:id', async (ctx) => {
    ctx.body = await resource.get(deps, tenantOf(ctx), ctx.params.id);
  });
  router.patch('/:id', async (ctx) => {
    ctx.body = await resource.update(deps, tenantOf(ctx), ctx.params.id, parseBody(ctx, resource.patchSchema, resource.readOnly));
  });
  router.delete('/:id', async (ctx) => {
    await resource.remove(deps, tenantOf(ctx), ctx.params.id);
    ctx.status = 204;
  });
  return router;
}
