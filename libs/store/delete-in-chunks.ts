/** Rows per statement: a few milliseconds of work, so requests waiting on the same database barely notice. */
export const DELETE_CHUNK_ROWS = 2000;

/**
 * Runs a bounded delete (`deleteChunk(limit)` deletes at most `limit` rows) until a chunk comes back
 * short, yielding to the event loop between chunks; returns the total deleted.
 */
export async function deleteInChunks(deleteChunk: (limit: number) => Promise<number>, chunkRows = DELETE_CHUNK_ROWS): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteChunk(chunkRows);
    total += deleted;
    if (deleted < chunkRows) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
