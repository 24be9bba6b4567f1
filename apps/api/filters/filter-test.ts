import { z } from 'zod';
import { compileFilter, type FilterDocument } from '../../../libs/filters/route-filter.js';
import { FieldBudget } from '../../../libs/payload/field-budget.js';
import { filterTakes } from '../../../libs/routing/route-targets.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';
import { payloadExpired, receivedBody, requireEvent, storedEventDocument } from '../events/event-service.js';
import { routeFilterSchema } from '../routes/route-filter-schema.js';

const values = z.record(z.string(), z.union([z.string(), z.array(z.string())]));

/** `{filter, eventId}` or `{filter, sample}`: one of the two. */
export const filterTestBody = z
  .strictObject({
    filter: routeFilterSchema,
    eventId: z.string().min(1).max(64).optional(),
    sample: z
      .strictObject({ body: z.unknown().optional(), headers: values.optional(), query: values.optional(), path: z.string().max(2048).optional() })
      .optional(),
  })
  .refine((input) => (input.eventId === undefined) !== (input.sample === undefined), { path: ['eventId'], message: 'give either eventId or sample' });

export type FilterTestInput = z.output<typeof filterTestBody>;

/** A sample as the router would see it: header names lower-cased, missing parts empty. */
function sampleDocument(sample: NonNullable<FilterTestInput['sample']>): FilterDocument {
  return {
    body: sample.body ?? null,
    headers: Object.fromEntries(Object.entries(sample.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])),
    query: sample.query ?? {},
    path: sample.path ?? '',
  };
}

/** Whether the filter takes the stored event (its body as received) or the sample; nothing changes. */
export async function testFilter(deps: ApiDeps, tenant: Tenant, input: FilterTestInput): Promise<{ matched: boolean }> {
  let document: FilterDocument;
  if (input.eventId !== undefined) {
    const event = await requireEvent(deps, tenant, input.eventId);
    const body = await receivedBody(deps, event);
    if (body === null) throw payloadExpired(event.id);
    document = storedEventDocument(event, body);
  } else document = sampleDocument(input.sample!);
  return { matched: filterTakes(compileFilter(input.filter), document, new FieldBudget()) };
}
