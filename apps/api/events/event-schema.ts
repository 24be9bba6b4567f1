import { z } from 'zod';
import { paginationShape, queryBoolean, queryString } from '../../../libs/http/validate.js';

export const EVENT_STATUSES = ['pending', 'delivered', 'partial', 'failed'] as const;
export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed'] as const;

/** Bulk id lists hold at most this many ids (DESIGN "Export and import"). */
export const MAX_BULK_IDS = 1000;

/** An ISO 8601 date or date-time with a zone (`Z` or an offset), as epoch ms; a date is its UTC midnight. */
export const queryInstant = queryString(40)
  .pipe(z.union([z.iso.datetime({ offset: true }), z.iso.date()], { error: 'must be an ISO 8601 date or date-time with a time zone' }))
  .transform(Date.parse)
  .pipe(z.number({ error: 'is not a valid date' }).finite());

/** `from` and `to` bound the same range: `from` after `to` matches nothing and is refused. */
export const fromNotAfterTo: [(range: { from?: number; to?: number }) => boolean, { message: string; path: string[] }] = [
  (range) => range.from === undefined || range.to === undefined || range.from <= range.to,
  { message: 'must not be after to', path: ['from'] },
];

export const listEventsQuery = z
  .object({
    ...paginationShape,
    sourceId: queryString(64).optional().meta({ description: 'Only events of this source', example: 'src_01JDQ4Z6W8K3M5N7P9R1T3V5X7' }),
    destinationId: queryString(64).optional().meta({ description: 'Only events with a delivery to this destination', example: 'dst_01JDQ4ZB2C4E6G8J0K2M4P6R8T' }),
    status: queryString(16).pipe(z.enum(EVENT_STATUSES)).optional().meta({ description: 'Only events in this state', example: 'failed' }),
    from: queryInstant.optional().meta({ description: 'Stored at or after (ISO 8601 date or date-time with a zone)', example: '2026-11-23T00:00:00Z' }),
    to: queryInstant.optional().meta({ description: 'Stored at or before (ISO 8601 date or date-time with a zone)', example: '2026-11-24' }),
    search: queryString(200).optional().meta({ description: 'Case-insensitive text in the payload (masked and encrypted fields excluded)', example: 'ord_1001' }),
    signatureValid: queryBoolean.optional().meta({ description: 'Only events whose signature verified (true) or failed (false)', example: 'false' }),
  })
  .refine(...fromNotAfterTo);

export const getEventQuery = z.object({
  includePayload: queryBoolean.optional().meta({ description: 'Include the payload (masked fields show ****)', example: 'true' }),
  includeDeliveries: queryBoolean.optional().meta({ description: 'Include the deliveries', example: 'true' }),
});

export const eventDeliveriesQuery = z.object({
  status: queryString(16).pipe(z.enum(DELIVERY_STATUSES)).optional().meta({ description: 'Only deliveries in this state', example: 'failed' }),
});

const idList = z
  .array(z.string().min(1).max(64))
  .min(1, 'must name at least one id')
  .max(MAX_BULK_IDS, `must hold at most ${MAX_BULK_IDS} ids`);

export const replayBody = z.strictObject({ destinationIds: idList.optional() });

export const bulkReplayBody = z.strictObject({ eventIds: idList, destinationIds: idList.optional() });
