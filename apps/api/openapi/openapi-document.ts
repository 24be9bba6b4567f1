import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import type { DocumentedContent, DocumentedOperation, DocumentedResponse } from '../../../libs/http/operation-spec.js';
import { ERROR_RESPONSES, errorSchema } from './error-schema.js';

export const BEARER_SCHEME = 'apiKey';

const ID_EXAMPLES: Record<string, string> = {
  sources: 'src_01JDQ4Z6W8K3M5N7P9R1T3V5X7',
  destinations: 'dst_01JDQ4ZB2C4E6G8J0K2M4P6R8T',
  routes: 'rte_01JDQ4ZF5H7K9M1P3R5T7V9X1Z',
  events: 'evt_01JDQ5A1B3C5D7E9F1G3H5J7K9',
  keys: 'key_01JDQ61M3P5R7T9V1X3Z5B7D9F',
};

/**
 * The error statuses an operation can answer besides its own: every authenticated call can be malformed
 * (400), unauthenticated (401), out of its key's scope (403), carry a body that is not JSON (415), past
 * its key's rate (429), meet an unreachable store (503) or, never expected, an internal fault (500); an
 * `{id}` can be unknown (404) and a body too large (413).
 */
function errorStatuses(operation: DocumentedOperation): number[] {
  const statuses = new Set(operation.errors ?? []);
  if (operation.scope !== 'public') {
    for (const status of [400, 401, 403, 415, 429, 500, 503]) statuses.add(status);
    if (operation.path.includes('{id}')) statuses.add(404);
    if (operation.body) statuses.add(413);
  }
  return [...statuses].sort();
}

function media(content: DocumentedContent) {
  return { schema: content.schema, example: content.example };
}

function response(documented: DocumentedResponse) {
  const content = { ...(documented.body ? { 'application/json': media(documented.body) } : {}) };
  for (const [type, body] of Object.entries(documented.content ?? {})) Object.assign(content, { [type]: media(body) });
  const headers = documented.headers
    ? Object.fromEntries(Object.entries(documented.headers).map(([name, description]) => [name, { description, schema: { type: 'string' as const } }]))
    : undefined;
  return { description: documented.description, ...(Object.keys(content).length > 0 ? { content } : {}), ...(headers ? { headers } : {}) };
}

function pathParameters(operation: DocumentedOperation) {
  const names = [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  if (names.length === 0) return undefined;
  const collection = operation.path.split('/')[2] ?? '';
  const shape: Record<string, z.ZodType> = {};
  for (const name of names) {
    const given = operation.pathParams?.[name];
    shape[name] = z.string().meta(given ?? { description: 'The resource id', example: ID_EXAMPLES[collection] ?? 'id' });
  }
  return z.object(shape);
}

/** One object per status, registered once as a component (`Error404`) and referenced by every operation. */
const errorResponses = new Map<number, ZodOpenApiResponseObject>();

function errorResponse(status: number): ZodOpenApiResponseObject {
  const error = ERROR_RESPONSES[status];
  if (!error) throw new Error(`no documented error response for ${status}`);
  let documented = errorResponses.get(status);
  if (!documented) {
    documented = {
      id: `Error${status}`,
      description: error.description,
      content: { 'application/json': { schema: errorSchema, example: error.example } },
      ...(status === 429 ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'string' } } } } : {}),
    };
    errorResponses.set(status, documented);
  }
  return documented;
}

/** The operation's own description, then what its raised scope needs (a security requirement cannot depend on a query flag). */
function description(operation: DocumentedOperation): string | undefined {
  const raised = operation.raisedScope && `\`${operation.raisedScope.flag}=true\` needs the \`${operation.raisedScope.scope}\` scope.`;
  return [operation.description, raised].filter(Boolean).join(' ') || undefined;
}

function operationObject(operation: DocumentedOperation): ZodOpenApiOperationObject {
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  for (const [status, documented] of Object.entries(operation.responses)) responses[status] = response(documented);
  for (const status of errorStatuses(operation)) responses[String(status)] = errorResponse(status);
  const path = pathParameters(operation);
  const text = description(operation);
  return {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    ...(text ? { description: text } : {}),
    security: operation.scope === 'public' ? [] : [{ [BEARER_SCHEME]: [operation.scope] }],
    ...(path || operation.query ? { requestParams: { ...(path ? { path } : {}), ...(operation.query ? { query: operation.query as z.ZodObject } : {}) } } : {}),
    ...(operation.body
      ? { requestBody: { required: operation.body.required, content: { [operation.body.contentType ?? 'application/json']: media(operation.body) } } }
      : {}),
    responses: responses as ZodOpenApiResponsesObject,
  };
}

/** The OpenAPI 3.1 document of these operations, built from the zod schemas their routes validate with. */
export function buildOpenApiDocument(operations: readonly DocumentedOperation[]) {
  const paths: ZodOpenApiPathsObject = {};
  for (const operation of operations) {
    const item = (paths[operation.path] ??= {});
    if (item[operation.method]) throw new Error(`${operation.method.toUpperCase()} ${operation.path} is declared twice`);
    item[operation.method] = operationObject(operation);
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Webhook Relay API',
      version: '1.0.0',
      description:
        'The management API under `/api` (every call with `Authorization: Bearer <API key>`), the public ingest endpoint and the probes. ' +
        'Errors always use the `Error` body. Keys have a scope: `admin` (everything), `write` (everything but key management and secrets: signing secrets, rotations, `includeSensitive` exports), `read` (GET only, secrets excepted); ' +
        "each operation's security requirement names the scope it needs.",
    },
    paths,
    components: {
      securitySchemes: {
        [BEARER_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key (`rk_...`). Scopes: `admin` ⊇ `write` ⊇ `read`; a key without the needed scope gets 403 FORBIDDEN.',
        },
      },
    },
  });
}
