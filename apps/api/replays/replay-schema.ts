import { z } from 'zod';
import { EVENT_STATUSES, fromNotAfterTo, MAX_BULK_IDS, queryInstant } from '../events/event-schema.js';

const idText = z.string().min(1).max(64);

/** The event list's filters (as JSON), plus the destination an event was delivered to; unknown fields are refused. */
export const replayFilterSchema = z
  .strictObject({
    sourceId: idText.optional(),
    destinationId: idText.optional(),
    status: z.enum(EVENT_STATUSES).optional(),
    from: queryInstant.optional(),
    to: queryInstant.optional(),
    search: z.string().min(1).max(200).optional(),
    signatureValid: z.boolean().optional(),
    issueId: idText.optional().meta({ description: "The issue's failed deliveries since it was first seen (`POST /api/issues/{id}/replay`)" }),
  })
  .refine(...fromNotAfterTo);

export const MAX_REPLAY_RATE = 10_000;

export const createReplayBody = z.strictObject({
  filter: replayFilterSchema,
  destinationIds: z.array(idText).min(1, 'must name at least one id').max(MAX_BULK_IDS, `must hold at most ${MAX_BULK_IDS} ids`).optional(),
  dryRun: z.boolean().optional(),
  maxPerSecond: z.number().int().min(1).max(MAX_REPLAY_RATE).default(100),
});

export type CreateReplayInput = z.output<typeof createReplayBody>;
