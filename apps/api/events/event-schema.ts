import { z } from 'zod';
import { paginationShape, queryBoolean, queryString } from '../../../libs/http/validate.js';

export const EVENT_STATUSES = ['pending', 'delivered', 'partial', 'failed'] as const;
export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed'] as const;

/** Bulk id lists hold at most this many ids (DESIGN "Export and import"). */
export const MAX_BULK_IDS = 1000;

/** An ISO 8601 date or date-time with a zone (`Z` or an offset), as epoch ms; a date is its UTC midnight. */
const queryInstant = queryString(40)
  .pipe(z.union([z.iso.datetime({ offset: true }), z.iso.date()], { error: 'must be an ISO 8601 date or date-time with a time zone' }))
  .transform(Date.parse)
  .pipe(z.number({ error: 'is not a valid date' }).finite());

export const listEventsQuery = z
  .object({
    ...paginationShape,
    sourceId: queryString(64).optional(),
    status: queryString(16).pipe(z.enum(EVENT_STATUSES)).optional(),
    from: queryInstant.optional(),
    to: queryInstant.optional(),
    search: queryString(200).optional(),
    signatureValid: queryBoolean.optional(),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, { message: 'must not be after to', path: ['from'] });

export const getEventQuery = z.object({ includePayload: queryBoolean.optional(), includeDeliveries: queryBoolean.optional() });

export const eventDeliveriesQuery = z.object({ status: queryString(16).pipe(z.enum(DELIVERY_STATUSES)).optional() });

const idList = z
  .array(z.string().min(1).max(64))
  .min(1, 'must name at least one id')
  .max(MAX_BULK_IDS, `must hold at most ${MAX_BULK_IDS} ids`);

export const replayBody = z.strictObject({ destinationIds: idList.optional() });

export const bulkReplayBody = z.strictObject({ eventIds: idList, destinationIds: idList.optional() });
