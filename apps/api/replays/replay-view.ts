import { isoTime } from '../../../libs/time/iso-time.js';
import type { EventFilter } from '../../../libs/ledger/event-queries.js';
import type { ReplayRecord } from '../../../libs/replays/replays.js';

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
