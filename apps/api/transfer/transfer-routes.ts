import Router from '@koa/router';
import { z } from 'zod';
import { queryBoolean } from '../../../libs/http/validate.js';
import type { ApiDeps } from '../api-deps.js';
import { parseBody, parseQuery, tenantOf } from '../request-input.js';
import { bulkDelete } from './bulk-delete.js';
import { destinationTransfer } from './destination-transfer.js';
import { exportResources } from './export-service.js';
import { commaSeparatedIds, idListSchema } from './id-list.js';
import { importResources } from './import-service.js';
import { sourceTransfer } from './source-transfer.js';
import type { TransferKind, TransferRow } from './transfer-kind.js';

const exportQuery = z.object({ ids: commaSeparatedIds.optional(), includeSensitive: queryBoolean.default(false) });
const bulkDeleteBody = z.strictObject({ ids: idListSchema });

function mount<Row extends TransferRow, Draft>(router: Router, deps: ApiDeps, kind: TransferKind<Row, Draft>): void {
  const base = `/${kind.collection}`;
  router.get(`${base}/export`, async (ctx) => {
    ctx.body = await exportResources(deps, tenantOf(ctx), kind, parseQuery(ctx, exportQuery));
  });
  router.post(`${base}/import`, async (ctx) => {
    ctx.body = await importResources(deps, tenantOf(ctx), kind, (ctx.request as { body?: unknown }).body);
  });
  router.delete(`${base}/bulk`, async (ctx) => {
    ctx.body = await bulkDelete(deps, tenantOf(ctx), kind, parseBody(ctx, bulkDeleteBody).ids);
  });
}

/**
 * Export, import and bulk delete of sources and destinations. `export`, `import` and `bulk` are literal
 * segments: mount this before the resource routers, whose `/:id` would otherwise take them.
 */
export function transferRoutes(deps: ApiDeps): Router {
  const router = new Router();
  mount(router, deps, sourceTransfer);
  mount(router, deps, destinationTransfer);
  return router;
}
