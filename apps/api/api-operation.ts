import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import { ForbiddenError } from '../../libs/errors/errors.js';
import { jsonBody } from '../../libs/http/json-body.js';
import { createRouter } from '../../libs/http/router.js';
import { pageEnvelope } from '../../libs/http/validate.js';
import type { DocumentedOperation, OperationScope } from '../../libs/http/operation-spec.js';
import type { ApiKeyScope } from '../../libs/store/entities/api-key.js';
import type { PageQuery } from '../../libs/store/org-scoped-repository.js';
import type { ApiDeps, Caller } from './api-deps.js';
import { authenticate } from './authenticate.js';
import { limitKeyRate } from './key-rate-limits.js';
import type { ApiPrincipal } from '../../libs/keys/key-authenticator.js';
import { parseBody, parseOptionalBody, parseQuery } from './request-input.js';

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** The authenticated caller: its key and scope, its organization and the public URL it sees. */
export type ApiCaller = ApiPrincipal & Caller;

/** What a handler gets: the request already authenticated, authorized and validated by the operation's schemas. */
export interface OperationInput<Query, Body> {
  ctx: Context;
  /** The caller; absent on `public` operations only. */
  tenant: ApiCaller;
  params: Record<string, string>;
  query: Parsed<Query>;
  body: Parsed<Body>;
}

/**
 * A management API operation: what the OpenAPI document says about it and the thin handler that serves
 * it, in one object, so the route and its documentation cannot come apart. The handler's return value is
 * the response body (nothing for 204).
 */
export interface ApiOperation<Query extends z.ZodType | undefined = any, Body extends z.ZodType | undefined = any> extends DocumentedOperation<Query, Body> {
  /** Fields the API returns but never takes, dropped from the body before validation (a fetched resource can be sent back). */
  readOnly?: readonly string[];
  /** The status answered unless the handler sets another; needed only with more than one success response. */
  status?: number;
  handle(deps: ApiDeps, input: OperationInput<Query, Body>): Promise<unknown>;
}

/** Declares an operation with its handler typed by its schemas. */
export function defineOperation<Query extends z.ZodType | undefined = undefined, Body extends z.ZodType | undefined = undefined>(
  operation: ApiOperation<Query, Body>,
): ApiOperation {
  return operation as ApiOperation;
}

/** The handler of a list operation: the domain function's page in the `{data, pagination}` envelope. */
export function listHandler<Query extends PageQuery>(list: (deps: ApiDeps, tenant: ApiCaller, query: Query) => Promise<{ rows: unknown[]; total: number }>) {
  return async (deps: ApiDeps, { tenant, query }: { tenant: ApiCaller; query: unknown }) => {
    const page = await list(deps, tenant, query as Query);
    return pageEnvelope(page.rows, page.total, query as Query);
  };
}

/** Which operation scopes each key scope may call. */
const GRANTS: Record<ApiKeyScope, readonly OperationScope[]> = {
  admin: ['admin', 'write', 'read'],
  write: ['write', 'read'],
  read: ['read'],
};

/** 403 unless the caller's key grants `needed`; `what` names the call in the message. */
function authorizeScope(tenant: ApiPrincipal, needed: OperationScope, what: string): void {
  if (!GRANTS[tenant.scope].includes(needed)) {
    throw new ForbiddenError('FORBIDDEN', `This API key has the "${tenant.scope}" scope; ${what} needs "${needed}"`);
  }
}

const callName = (operation: ApiOperation) => `${operation.method.toUpperCase()} ${operation.path}`;

function requireScope(operation: ApiOperation): Middleware {
  return async function authorize(ctx, next) {
    authorizeScope(ctx.state.tenant as ApiPrincipal, operation.scope, callName(operation));
    await next();
  };
}

/** The operation's raised scope, once its query is parsed: only a flag that is really `true` raises it. */
function requireRaisedScope(operation: ApiOperation, tenant: ApiPrincipal, query: unknown): void {
  const raised = operation.raisedScope;
  if (raised && (query as Record<string, unknown> | undefined)?.[raised.flag] === true) {
    authorizeScope(tenant, raised.scope, `${callName(operation)} with ${raised.flag}=true`);
  }
}

const successStatus = (operation: ApiOperation) => operation.status ?? Number(Object.keys(operation.responses)[0]);

function serve(deps: ApiDeps, operation: ApiOperation): Middleware {
  return async function handleOperation(ctx) {
    const query = operation.query ? parseQuery(ctx, operation.query) : undefined;
    requireRaisedScope(operation, ctx.state.tenant as ApiPrincipal, query);
    let body: unknown;
    if (operation.body) body = operation.body.required ? parseBody(ctx, operation.body.schema, operation.readOnly) : parseOptionalBody(ctx, operation.body.schema);
    ctx.status = successStatus(operation);
    const result = await operation.handle(deps, { ctx, tenant: ctx.state.tenant as ApiCaller, params: ctx.params, query, body });
    if (result !== undefined) ctx.body = result;
  };
}

/** `{id}` to Koa's `:id`. */
const routerPath = (template: string) => template.replace(/\{(\w+)\}/g, ':$1');

/**
 * Routes the operations in the order given (literal segments such as `export` before `{id}`). Every
 * operation but a public one authenticates the key, counts the call against the key's rate, checks its
 * scope and reads a JSON body before the handler runs. Handlers' domain functions announce the configuration changes they make.
 */
export function operationsRouter(deps: ApiDeps, operations: readonly ApiOperation[]): Router {
  const router = createRouter();
  const identify = authenticate(deps);
  const withinRate = limitKeyRate(deps.keyRateLimits);
  const readJson = jsonBody();
  for (const operation of operations) {
    const guards = operation.scope === 'public' ? [] : [identify, withinRate, requireScope(operation), readJson];
    router.register(routerPath(operation.path), [operation.method.toUpperCase()], [...guards, serve(deps, operation)]);
  }
  return router;
}
