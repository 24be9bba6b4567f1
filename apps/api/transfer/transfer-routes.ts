import { z } from 'zod';
import { queryBoolean } from '../../../libs/http/validate.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';
import { defineOperation, type ApiOperation } from '../api-operation.js';
import { destinationExample, destinationViewSchema } from '../destinations/destination-view.js';
import { EXAMPLE_TIME, timestamp } from '../openapi/shared-schemas.js';
import { sourceExample, sourceViewSchema, verificationViewSchema } from '../sources/source-view.js';
import { bulkDelete } from '../../../libs/transfer/bulk-delete.js';
import { destinationTransfer } from '../../../libs/transfer/destination-transfer.js';
import { exportResources } from '../../../libs/transfer/export-service.js';
import { commaSeparatedIds, idListSchema } from '../../../libs/transfer/id-list.js';
import { CONFLICT_STRATEGIES, importRequestSchema } from '../../../libs/transfer/import-request.js';
import { importResources } from '../../../libs/transfer/import-service.js';
import { sourceTransfer } from '../../../libs/transfer/source-transfer.js';
import { EXPORT_VERSION, REDACTED, type TransferKind, type TransferRow } from '../../../libs/transfer/transfer-kind.js';

const exportQuery = z.object({
  ids: commaSeparatedIds.optional().meta({ description: 'Comma-separated ids (1..1000); every one when left out', example: 'src_01JDQ4Z6W8K3M5N7P9R1T3V5X7,src_01JDQ4Z6W8K3M5N7P9R1T3V5X8' }),
  includeSensitive: queryBoolean
    .default(false)
    .meta({ description: 'Include secrets and credentials in clear (default false: redacted); true needs an `admin` key', example: 'false' }),
});
const bulkDeleteBody = z.strictObject({ ids: idListSchema });

/**
 * Import and bulk delete change many rows at once: every process drops what it cached of the kind.
 * Announced here, not in the transfer services, which the CLI runs with no broker at hand.
 */
function announceAll(deps: ApiDeps, tenant: Tenant, kind: { collection: 'sources' | 'destinations' }, action: 'updated' | 'deleted') {
  return deps.announce({ kind: kind.collection === 'sources' ? 'source' : 'destination', action, orgId: tenant.org.id, id: '*' });
}

const sourceEntrySchema = sourceViewSchema
  .pick({
    name: true,
    slug: true,
    provider: true,
    description: true,
    rejectInvalidSignatures: true,
    rateLimitPerMinute: true,
    ipFilterMode: true,
    ipAllowlist: true,
    ipDenylist: true,
    encryptFields: true,
    maskFields: true,
    dedupEnabled: true,
    dedupStrategy: true,
    dedupWindowHours: true,
    dedupCustomHeader: true,
  })
  .extend({
    signingSecret: z.string().nullable().meta({ description: `The secret, or "${REDACTED}" without includeSensitive; null when the source has none` }),
    verificationConfig: verificationViewSchema.omit({ secret: true }),
    isActive: z.boolean(),
  })
  .meta({ id: 'SourceExportEntry' });

const destinationEntrySchema = destinationViewSchema
  .pick({ name: true, slug: true, type: true, url: true, target: true, method: true, description: true, headers: true, authType: true, timeoutMs: true, rateLimitPerMinute: true, retryPolicy: true, ordering: true, autoDisableAfterSeconds: true })
  .extend({
    headers: z.record(z.string(), z.string()).meta({ description: `Header names with their values, each "${REDACTED}" without includeSensitive` }),
    authConfig: z.union([z.literal(REDACTED), z.record(z.string(), z.string())]).meta({ description: `The credentials, or "${REDACTED}" without includeSensitive` }),
    type: destinationViewSchema.shape.type.optional().meta({ description: 'Absent for http, the default' }),
    isActive: z.boolean(),
  })
  .meta({ id: 'DestinationExportEntry' });

/** An entry's example: the fields it shares with the API view, from the view's example, then its own. */
function entryExample(entry: z.ZodObject, view: object, own: Record<string, unknown>): Record<string, unknown> {
  return { ...Object.fromEntries(Object.entries(view).filter(([field]) => field in entry.shape)), ...own };
}

const sourceEntryExample = entryExample(sourceEntrySchema, sourceExample, {
  signingSecret: REDACTED,
  verificationConfig: { type: 'codehost', toleranceSeconds: 300 },
  isActive: true,
});

const destinationEntryExample = entryExample(destinationEntrySchema, destinationExample, {
  headers: Object.fromEntries(Object.keys(destinationExample.headers).map((name) => [name, REDACTED])),
  authConfig: REDACTED,
  isActive: true,
});

const entryResultSchema = z
  .object({
    index: z.number().int(),
    name: z.string().nullable(),
    slug: z.string().nullable(),
    status: z.enum(['valid', 'renamed', 'overwrite', 'skip', 'error']),
    errors: z.array(z.string()),
    warnings: z.array(z.string()),
    renamedTo: z.string().optional(),
  })
  .meta({ id: 'ImportEntryResult' });

const countsSchema = { imported: z.number().int(), skipped: z.number().int(), overwritten: z.number().int(), failed: z.number().int() };
const namesSchema = { imported: z.array(z.string()), skipped: z.array(z.string()), overwritten: z.array(z.string()), failed: z.array(z.string()) };

/** SPEC 4.5: the validation response (validateOnly) or the import response. */
const importResultSchema = z
  .union([
    z
      .object({
        valid: z.boolean(),
        validationResults: z.array(entryResultSchema),
        summary: z.object({ total: z.number().int(), toCreate: z.number().int(), toOverwrite: z.number().int(), toSkip: z.number().int(), errors: z.number().int() }),
      })
      .meta({ id: 'ImportValidation' }),
    z.object({ success: z.boolean(), summary: z.object(countsSchema), details: z.object(namesSchema), results: z.array(entryResultSchema) }).meta({ id: 'ImportResult' }),
  ])
  .meta({ id: 'ImportResponse' });

const bulkDeleteSchema = z.object({ success: z.boolean(), deleted: z.number().int() }).meta({ id: 'BulkDeleteResult' });

interface TransferDocs {
  noun: string;
  entry: z.ZodType;
  entryExample: Record<string, unknown>;
  idExample: string;
}

const DOCS: Record<'sources' | 'destinations', TransferDocs> = {
  sources: { noun: 'Source', entry: sourceEntrySchema, entryExample: sourceEntryExample, idExample: sourceExample.id },
  destinations: { noun: 'Destination', entry: destinationEntrySchema, entryExample: destinationEntryExample, idExample: destinationExample.id },
};

function kindOperations<Row extends TransferRow, Draft>(kind: TransferKind<Row, Draft>): ApiOperation[] {
  const base = `/api/${kind.collection}`;
  const docs = DOCS[kind.collection];
  const tag = `${docs.noun}s`;
  const envelope = z
    .object({ version: z.literal(EXPORT_VERSION), exportedAt: timestamp, organizationSlug: z.string(), [kind.collection]: z.array(docs.entry) })
    .meta({ id: `${docs.noun}Export` });
  const exportExample = { version: EXPORT_VERSION, exportedAt: EXAMPLE_TIME, organizationSlug: 'acme', [kind.collection]: [docs.entryExample] };
  return [
    defineOperation({
      method: 'get',
      path: `${base}/export`,
      operationId: `export${tag}`,
      tag,
      summary: `Export ${kind.collection} as JSON (secrets redacted unless includeSensitive)`,
      scope: 'read',
      raisedScope: { flag: 'includeSensitive', scope: 'admin' },
      query: exportQuery,
      responses: { 200: { description: 'The export envelope (SPEC 2.8)', body: { schema: envelope, example: exportExample } } },
      // An id in `ids` that is unknown or another organization's; nothing is exported.
      errors: [404],
      handle: (deps, { tenant, query }) => exportResources(deps, tenant, kind, query),
    }),
    defineOperation({
      method: 'post',
      path: `${base}/import`,
      operationId: `import${tag}`,
      tag,
      summary: `Import ${kind.collection}; conflicts are found by slug`,
      description: 'Entries are checked one by one with the create rules; a whole export envelope is accepted as it is.',
      scope: 'write',
      body: {
        schema: importRequestSchema(kind.collection),
        required: true,
        example: { [kind.collection]: [docs.entryExample], conflictStrategy: CONFLICT_STRATEGIES[1], validateOnly: true },
      },
      responses: {
        200: {
          description: 'With validateOnly, what would happen; otherwise what happened',
          body: {
            schema: importResultSchema,
            example: {
              valid: true,
              validationResults: [{ index: 0, name: docs.entryExample.name as string, slug: docs.entryExample.slug as string, status: 'valid', errors: [], warnings: [] }],
              summary: { total: 1, toCreate: 1, toOverwrite: 0, toSkip: 0, errors: 0 },
            },
          },
        },
      },
      errors: [409],
      async handle(deps, { ctx, tenant }) {
        const result = await importResources(deps, tenant, kind, (ctx.request as { body?: unknown }).body);
        if ('success' in result) await announceAll(deps, tenant, kind, 'updated');
        return result;
      },
    }),
    defineOperation({
      method: 'delete',
      path: `${base}/bulk`,
      operationId: `bulkDelete${tag}`,
      tag,
      summary: `Delete many ${kind.collection} at once; one unknown id deletes none`,
      scope: 'write',
      body: { schema: bulkDeleteBody, required: true, example: { ids: [docs.idExample] } },
      responses: { 200: { description: 'How many were deleted', body: { schema: bulkDeleteSchema, example: { success: true, deleted: 1 } } } },
      errors: [404],
      async handle(deps, { tenant, body }) {
        const result = await bulkDelete(deps, tenant, kind, body.ids);
        await announceAll(deps, tenant, kind, 'deleted');
        return result;
      },
    }),
  ];
}

/**
 * Export, import and bulk delete of sources and destinations. `export`, `import` and `bulk` are literal
 * segments: these operations are routed before the resources' `{id}` ones, which would otherwise take them.
 */
export const transferOperations: ApiOperation[] = [...kindOperations(sourceTransfer), ...kindOperations(destinationTransfer)];
