import type { DeliveryJob } from '../pipeline/delivery-job.js';
import type { SqlClient } from '../store/sql-client.js';

/** A job kept while it waits for its turn, as its record was. */
export interface WaitingJob {
  job: DeliveryJob;
  body: Buffer;
}

/** What to do with a job of an ordered destination. */
export type Admission = 'send' | 'wait' | 'done';

/**
 * Each source's line to an ordered destination (`ordering: "source"`): one delivery at its head, which
 * alone may be sent (retries included), and the jobs behind it, kept until it is done. Declared by the
 * deliverer; kept in the store, so a restart or a kill loses no place in a line.
 */
export interface SourceLines {
  /**
   * `send` when the job heads its line (it becomes the head of an empty one), `wait` when another
   * delivery does (the job is kept here and its record may be committed), `done` when the job was
   * finished already (a record delivered again after a crash).
   */
  admit(job: DeliveryJob, body: Buffer): Promise<Admission>;
  /** The head is delivered or finally failed: the next job becomes the head and is returned, to be published. */
  advance(job: DeliveryJob): Promise<WaitingJob | null>;
  /** The new head is back in its destination topic: it no longer needs keeping here. */
  published(deliveryId: string): Promise<void>;
  /** Heads still kept here (the process stopped before `published`): to be published again at start. */
  unpublishedHeads(): Promise<WaitingJob[]>;
  /**
   * Lets go of the lines of a destination (every destination when none is named) that is no longer
   * ordered, or deleted: its waiting jobs are handed to `publish` in line order, then the lines are
   * cleared. Returns how many jobs were released.
   */
  releaseUnordered(destinationId: string | undefined, publish: (jobs: WaitingJob[]) => Promise<void>): Promise<number>;
}

interface LineRow {
  head: string | null;
  lastDone: string | null;
}

const waitingOf = (row: { job: string; body: Buffer | Uint8Array }): WaitingJob => ({ job: JSON.parse(row.job) as DeliveryJob, body: Buffer.from(row.body) });

/**
 * Over the store. Every change to a line runs in a transaction that first locks the line's row
 * (PostgreSQL: `FOR UPDATE`; SQLite transactions take turns on the one connection), so a job taking its
 * place and the head finishing never interleave. Delivery ids of a line grow in its order (the router
 * creates them as it reads the source's partition), which is what `lastDone` relies on.
 */
export function createSqlSourceLines(sql: SqlClient): SourceLines {
  const lock = sql.kind === 'postgres' ? ' FOR UPDATE' : '';

  /** Whether the destination is ordered now; read under a share lock, so a switch to `none` waits for this transaction. */
  async function stillOrdered(tx: SqlClient, destinationId: string): Promise<boolean> {
    const [destination] = await tx.all<{ ordering: string }>(
      `SELECT ordering FROM destinations WHERE id = ?${sql.kind === 'postgres' ? ' FOR SHARE' : ''}`,
      [destinationId],
    );
    return destination?.ordering === 'source';
  }

  async function lockedLine(tx: SqlClient, job: DeliveryJob): Promise<LineRow> {
    await tx.run('INSERT INTO ordered_heads (destination_id, source_id) VALUES (?, ?) ON CONFLICT (destination_id, source_id) DO NOTHING', [
      job.destinationId,
      job.sourceId,
    ]);
    const [line] = await tx.all<LineRow>(
      `SELECT head_delivery_id AS "head", last_done_delivery_id AS "lastDone" FROM ordered_heads WHERE destination_id = ? AND source_id = ?${lock}`,
      [job.destinationId, job.sourceId],
    );
    return line!;
  }

  const setLine = (tx: SqlClient, job: DeliveryJob, head: string | null, lastDone: string | null) =>
    tx.run('UPDATE ordered_heads SET head_delivery_id = ?, last_done_delivery_id = ? WHERE destination_id = ? AND source_id = ?', [
      head,
      lastDone,
      job.destinationId,
      job.sourceId,
    ]);

  return {
    admit: (job, body) =>
      sql.transaction(async (tx) => {
        // The deliverer's cached destination may predate a switch to `none`, whose release has no line to find.
        if (!(await stillOrdered(tx, job.destinationId))) return 'send';
        const line = await lockedLine(tx, job);
        if (line.lastDone !== null && job.deliveryId <= line.lastDone) return 'done';
        if (line.head === null) {
          await setLine(tx, job, job.deliveryId, line.lastDone);
          return 'send';
        }
        if (line.head === job.deliveryId) return 'send';
        await tx.run(
          `INSERT INTO ordered_waiting (delivery_id, destination_id, source_id, job, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT (delivery_id) DO NOTHING`,
          [job.deliveryId, job.destinationId, job.sourceId, JSON.stringify(job), body],
        );
        return 'wait';
      }),

    advance: (job) =>
      sql.transaction(async (tx) => {
        const line = await lockedLine(tx, job);
        if (line.head !== job.deliveryId) return null;
        const [next] = await tx.all<{ deliveryId: string; job: string; body: Buffer }>(
          `SELECT delivery_id AS "deliveryId", job, body FROM ordered_waiting WHERE destination_id = ? AND source_id = ? ORDER BY delivery_id LIMIT 1`,
          [job.destinationId, job.sourceId],
        );
        await setLine(tx, job, next?.deliveryId ?? null, job.deliveryId);
        return next ? waitingOf(next) : null;
      }),

    async published(deliveryId) {
      await sql.run('DELETE FROM ordered_waiting WHERE delivery_id = ?', [deliveryId]);
    },

    async unpublishedHeads() {
      const rows = await sql.all<{ job: string; body: Buffer }>(
        `SELECT w.job, w.body FROM ordered_waiting w
         JOIN ordered_heads h ON h.destination_id = w.destination_id AND h.source_id = w.source_id AND h.head_delivery_id = w.delivery_id`,
      );
      return rows.map(waitingOf);
    },

    async releaseUnordered(destinationId, publish) {
      const byDestination = destinationId === undefined ? '' : ' AND l.destination_id = ?';
      const destinations = await sql.all<{ destinationId: string }>(
        `SELECT DISTINCT l.destination_id AS "destinationId" FROM ordered_heads l LEFT JOIN destinations d ON d.id = l.destination_id
         WHERE (d.id IS NULL OR d.ordering <> 'source')${byDestination}`,
        destinationId === undefined ? [] : [destinationId],
      );
      let released = 0;
      for (const { destinationId: id } of destinations) {
        released += await sql.transaction(async (tx) => {
          // Locked like every change to a line: a second deliverer releasing the same lines finds them empty.
          await tx.all(`SELECT source_id FROM ordered_heads WHERE destination_id = ?${lock}`, [id]);
          if (await stillOrdered(tx, id)) return 0;
          const waiting = await tx.all<{ job: string; body: Buffer }>(
            'SELECT job, body FROM ordered_waiting WHERE destination_id = ? ORDER BY source_id, delivery_id',
            [id],
          );
          // Published before the rows go: a crash in between publishes them again at start (at least once).
          if (waiting.length > 0) await publish(waiting.map(waitingOf));
          await tx.run('DELETE FROM ordered_waiting WHERE destination_id = ?', [id]);
          await tx.run('DELETE FROM ordered_heads WHERE destination_id = ?', [id]);
          return waiting.length;
        });
      }
      return released;
    },
  };
}
