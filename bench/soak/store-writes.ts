import pg from 'pg';

/** What a relay wrote to its PostgreSQL database, from the server's own statistics of that database. */
export interface StoreWrites {
  commits: number;
  inserted: number;
  updated: number;
  deleted: number;
  /** `pg_database_size`: tables, indexes and dead row versions not yet vacuumed. */
  bytes: number;
}

const QUIET_READS = 3;
const READ_EVERY_MS = 500;
const SETTLE_LIMIT_MS = 15_000;

/**
 * Reads the counters of the database at `url`. A backend sends its counters to the statistics at most
 * once a second and when it goes idle, so `settled` reads until they stop moving.
 */
export async function watchStoreWrites(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // Each read is a transaction of its own, so it sees fresh statistics (its own commit, a few per rate, is
  // within the rounding of thousands of events).
  const read = async (): Promise<StoreWrites> => {
    const { rows } = await client.query(
      `SELECT xact_commit AS commits, tup_inserted AS inserted, tup_updated AS updated, tup_deleted AS deleted,
              pg_database_size(current_database()) AS bytes
         FROM pg_stat_database WHERE datname = current_database()`,
    );
    const row = rows[0] as Record<keyof StoreWrites, string>;
    return { commits: Number(row.commits), inserted: Number(row.inserted), updated: Number(row.updated), deleted: Number(row.deleted), bytes: Number(row.bytes) };
  };
  return {
    read,
    async settled(): Promise<StoreWrites> {
      const deadline = Date.now() + SETTLE_LIMIT_MS;
      let last = await read();
      for (let quiet = 0; quiet < QUIET_READS && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, READ_EVERY_MS));
        const next = await read();
        quiet = next.inserted === last.inserted && next.updated === last.updated && next.deleted === last.deleted ? quiet + 1 : 0;
        last = next;
      }
      return last;
    },
    close: () => client.end(),
  };
}

/** Per event, what `after - before` wrote. */
export function storeWritesPerEvent(before: StoreWrites, after: StoreWrites, events: number): string {
  const each = (key: keyof StoreWrites) => (after[key] - before[key]) / Math.max(1, events);
  return (
    `PostgreSQL per event: ${each('commits').toFixed(2)} commits, rows ${each('inserted').toFixed(1)} inserted, ` +
    `${each('updated').toFixed(1)} updated, ${each('deleted').toFixed(1)} deleted; database ${(each('bytes') / 1024).toFixed(1)} KB larger`
  );
}
