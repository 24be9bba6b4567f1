import type { z } from 'zod';
import type { DocumentedContent } from '../../libs/http/operation-spec.js';
import type { PageQuery } from '../../libs/store/org-scoped-repository.js';
import type { Tenant } from '../../libs/tenancy/tenant.js';
import type { ApiDeps } from './api-deps.js';
import { defineOperation, listHandler, type ApiOperation } from './api-operation.js';
import { pageExample, pageOf } from './openapi/shared-schemas.js';

/** One resource's schemas, examples and domain functions: what its list, create, get, patch and delete operations call. */
export interface ResourceCrud<ListQuery extends z.ZodType<PageQuery>, Create extends z.ZodType, Patch extends z.ZodType> {
  /** URL segment under `/api`, e.g. `sources`. */
  collection: string;
  /** `Source`: names the operations (`createSource`) and their documentation. */
  noun: string;
  listQuery: ListQuery;
  create: DocumentedContent<Create>;
  patch: DocumentedContent<Patch>;
  /** The resource as get, create and patch answer it. */
  view: DocumentedContent;
  /** The list item form. */
  summary: DocumentedContent;
  /** Conflict statuses create and patch may answer beyond validation (409 for a taken slug). */
  writeErrors?: readonly number[];
  /** Conflict statuses delete may answer (409 IN_USE for a transformation a route uses). */
  deleteErrors?: readonly number[];
  /** Fields the API returns but never takes; dropped from bodies, so a fetched resource can be sent back. */
  readOnly: readonly string[];
  list(deps: ApiDeps, tenant: Tenant, query: z.output<ListQuery>): Promise<{ rows: unknown[]; total: number }>;
  insert(deps: ApiDeps, tenant: Tenant, input: z.output<Create>): Promise<unknown>;
  get(deps: ApiDeps, tenant: Tenant, id: string): Promise<unknown>;
  update(deps: ApiDeps, tenant: Tenant, id: string, patch: z.output<Patch>): Promise<unknown>;
  remove(deps: ApiDeps, tenant: Tenant, id: string): Promise<void>;
}

/**
 * `GET /` (paginated envelope), `POST /` (201), `GET /{id}`, `PATCH /{id}` and `DELETE /{id}` (204) of one
 * resource; the resource's module adds its own operations beside these.
 */
export function resourceOperations<ListQuery extends z.ZodType<PageQuery>, Create extends z.ZodType, Patch extends z.ZodType>(
  resource: ResourceCrud<ListQuery, Create, Patch>,
): ApiOperation[] {
  const collection = `/api/${resource.collection}`;
  const plural = `${resource.noun}s`;
  const tag = plural;
  const lower = resource.noun.toLowerCase();
  return [
    defineOperation({
      method: 'get',
      path: collection,
      operationId: `list${plural}`,
      tag,
      summary: `List ${lower}s, newest first`,
      scope: 'read',
      query: resource.listQuery,
      responses: { 200: { description: `A page of ${lower} summaries`, body: { schema: pageOf(resource.summary.schema, `${resource.noun}Page`), example: pageExample(resource.summary.example) } } },
      handle: listHandler(resource.list),
    }),
    defineOperation({
      method: 'post',
      path: collection,
      operationId: `create${resource.noun}`,
      tag,
      summary: `Create a ${lower}`,
      scope: 'write',
      body: { ...resource.create, required: true },
      readOnly: resource.readOnly,
      responses: { 201: { description: `The created ${lower}`, body: resource.view } },
      errors: resource.writeErrors,
      handle: (deps, { tenant, body }) => resource.insert(deps, tenant, body as z.output<Create>),
    }),
    defineOperation({
      method: 'get',
      path: `${collection}/{id}`,
      operationId: `get${resource.noun}`,
      tag,
      summary: `Get a ${lower}`,
      scope: 'read',
      responses: { 200: { description: `The ${lower}`, body: resource.view } },
      handle: (deps, { tenant, params }) => resource.get(deps, tenant, params.id!),
    }),
    defineOperation({
      method: 'patch',
      path: `${collection}/{id}`,
      operationId: `update${resource.noun}`,
      tag,
      summary: `Change some fields of a ${lower}; the others stay`,
      scope: 'write',
      body: { ...resource.patch, required: true },
      readOnly: resource.readOnly,
      responses: { 200: { description: `The updated ${lower}`, body: resource.view } },
      errors: resource.writeErrors,
      handle: (deps, { tenant, params, body }) => resource.update(deps, tenant, params.id!, body as z.output<Patch>),
    }),
    defineOperation({
      method: 'delete',
      path: `${collection}/{id}`,
      operationId: `delete${resource.noun}`,
      tag,
      summary: `Delete a ${lower}`,
      scope: 'write',
      responses: { 204: { description: 'Deleted' } },
      errors: resource.deleteErrors,
      handle: (deps, { tenant, params }) => resource.remove(deps, tenant, params.id!),
    }),
  ];
}
