import { deleteInChunks } from '../store/delete-in-chunks.js';
import type { SqlClient } from '../store/sql-client.js';

/** Drops the ids a finished job no longer needs, a chunk at a time so other queries are not held up. */
export function dropSnapshot(sql: SqlClient, replayId: string): Promise<number> {
  return deleteInChunks((limit) =>
    sql.run('DELETE FROM replay_events WHERE replay_id = ? AND event_id IN (SELECT event_id FROM replay_events WHERE replay_id = ? LIMIT ?)', [
      replayId,
      replayId,
      limit,
    ]),
  );
}
