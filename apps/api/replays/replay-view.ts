import { isoTime } from '../../../libs/time/iso-time.js';
import type { EventFilter } from '../../../libs/ledger/event-queries.js';

/** A replay job as stored. */
export interface ReplayRecord {
  id: string;
  orgId: string;
  status: 'running' | 'completed' | 'cancelled' | 'failed';
  /** JSON text of the filter as parsed (`from`/`to` in epoch ms). */
  filter: string;
  /** JSON text, or null: the routes of each event's source. */
  destinationIds: string | null;
  maxPerSecond: number;
  matched: number;
  replayed: number;
  skipped: number;
  createdAt: number;
  finishedAt: number | null;
  /** Why a `failed` job stopped; null otherwise. */
  error: string | null;
}

export const REPLAY_COLUMNS = `id, org_id AS "orgId", status, filter, destination_ids AS "destinationIds", max_per_second AS "maxPerSecond",
  matched, replayed, skipped, created_at AS "createdAt", finished_at AS "finishedAt", error`;

/** DESIGN section 6: the job with its progress; the filter shows its bounds as ISO 8601. */
export function replayView(row: ReplayRecord) {
  const filter = JSON.parse(row.filter) as EventFilter;
  return {
    id: row.id,
    status: row.status,
    filter: { ...filter, ...(filter.from === undefined ? {} : { from: isoTime(filter.from) }), ...(filter.to === undefined ? {} : { to: isoTime(filter.to) }) },
    destinationIds: row.destinationIds === null ? null : (JSON.parse(row.destinationIds) as string[]),
    matched: Number(row.matched),
    replayed: Number(row.replayed),
    skipped: Number(row.skipped),
    maxPerSecond: Number(row.maxPerSecond),
    createdAt: isoTime(Number(row.createdAt)),
    finishedAt: isoTime(row.finishedAt === null ? null : Number(row.finishedAt)),
    error: row.error,
  };
}
