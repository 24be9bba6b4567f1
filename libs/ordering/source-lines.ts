import { z } from 'zod';
import { deadLetterOfStoredJob, type DeadLetters } from '../pipeline/dead-letter.js';
import { decodeStoredDeliveryJob, type DeliveryJob } from '../pipeline/delivery-job.js';
import { poisonReason } from '../pipeline/poison-records.js';
import { decodeRows } from '../store/row-schema.js';
import { orderedUnderShareLock } from '../destinations/destination-queries.js';
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

/** Where a job waits: its line (destination and source) and its place in it. */
interface LinePlace {
  deliveryId: string;
  destinationId: string;
  sourceId: string;
}

/** A waiting job as its row was written: the job as JSON text, checked only when read back. */
const waitingRowSchema = z.object({
  deliveryId: z.string(),
  destinationId: z.string(),
  sourceId: z.string(),
  job: z.string(),
  body: z.instanceof(Uint8Array),
});

type WaitingRow = z.infer<typeof waitingRowSchema>;

const WAITING_COLUMNS = 'w.delivery_id AS "deliveryId", w.destination_id AS "destinationId", w.source_id AS "sourceId", w.job, w.body';

/**
 * Over the store. Every change to a line runs in a transaction that first locks the line's row
 * (PostgreSQL: `FOR UPDATE`; SQLite transactions take turns on the one connection), so a job taking its
 * place and the head finishing never interleave. Delivery ids of a line grow in its order (the router
 * creates them as it reads the source's partition), which is what `lastDone` relies on. A kept job that
 * its schema no longer describes goes to relay.dead through `deadLetters`, and the line moves past it.
 */
export function createSqlSourceLines(sql: SqlClient, deadLetters: DeadLetters): SourceLines {
  const lock = sql.kind === 'postgres' ? ' FOR UPDATE' : '';

  const waitingRows = async (tx: SqlClient, where: string, params: unknown[]) =>
    decodeRows(waitingRowSchema, 'ordered_waiting', await tx.all(`SELECT ${WAITING_COLUMNS} FROM ordered_waiting w ${where}`, params));

  /** The row's job, or null once an undecodable one is dead-lettered. */
  async function decoded(row: WaitingRow): Promise<WaitingJob | null> {
    try {
      return { job: decodeStoredDeliveryJob(row.job), body: Buffer.from(row.body) };
    } catch (error) {
      await deadLetters('malformed_record', deadLetterOfStoredJob(row, `ordered_waiting/${row.deliveryId}`, poisonReason(error).detail));
      return null;
    }
  }

  async function lockedLine(tx: SqlClient, place: LinePlace): Promise<LineRow> {
    await tx.run('INSERT INTO ordered_heads (destination_id, source_id) VALUES (?, ?) ON CONFLICT (destination_id, source_id) DO NOTHING', [
      place.destinationId,
      place.sourceId,
    ]);
    const [line] = await tx.all<LineRow>(
      `SELECT head_delivery_id AS "head", last_done_delivery_id AS "lastDone" FROM ordered_heads WHERE destination_id = ? AND source_id = ?${lock}`,
      [place.destinationId, place.sourceId],
    );
    return line!;
  }

  const setLine = (tx: SqlClient, place: LinePlace, head: string | null, lastDone: string | null) =>
    tx.run('UPDATE ordered_heads SET head_delivery_id = ?, last_done_delivery_id = ? WHERE destination_id = ? AND source_id = ?', [
      head,
      lastDone,
      place.destinationId,
      place.sourceId,
    ]);

  /** The head at `place` is done: the next decodable job behind it heads the line (undecodable ones are dead-lettered and dropped). */
  async function advanceLine(tx: SqlClient, place: LinePlace): Promise<WaitingJob | null> {
    const line = await lockedLine(tx, place);
    if (line.head !== place.deliveryId) return null;
    for (;;) {
      const [next] = await waitingRows(tx, 'WHERE w.destination_id = ? AND w.source_id = ? AND w.delivery_id <> ? ORDER BY w.delivery_id LIMIT 1', [
        place.destinationId,
        place.sourceId,
        place.deliveryId,
      ]);
      const waiting = next ? await decoded(next) : null;
      if (next && !waiting) {
        await tx.run('DELETE FROM ordered_waiting WHERE delivery_id = ?', [next.deliveryId]);
        continue;
      }
      await setLine(tx, place, next?.deliveryId ?? null, place.deliveryId);
      return waiting;
    }
  }

  /** Every line's kept head; a head that no longer decodes is dead-lettered, and its line moves on. */
  async function unpublishedHeads(): Promise<WaitingJob[]> {
    const rows = await waitingRows(
      sql,
      'JOIN ordered_heads h ON h.destination_id = w.destination_id AND h.source_id = w.source_id AND h.head_delivery_id = w.delivery_id',
      [],
    );
    const heads: WaitingJob[] = [];
    for (const row of rows) {
      const head = await decoded(row);
      if (head) {
        heads.push(head);
        continue;
      }
      await sql.run('DELETE FROM ordered_waiting WHERE delivery_id = ?', [row.deliveryId]);
      const next = await sql.transaction((tx) => advanceLine(tx, row));
      if (next) heads.push(next);
    }
    return heads;
  }

  return {
    admit: (job, body) =>
      sql.transaction(async (tx) => {
        // The deliverer's cached destination may predate a switch to `none`, whose release has no line to find.
        if (!(await orderedUnderShareLock(tx, job.destinationId))) return 'send';
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

    advance: (job) => sql.transaction((tx) => advanceLine(tx, job)),

    async published(deliveryId) {
      await sql.run('DELETE FROM ordered_waiting WHERE delivery_id = ?', [deliveryId]);
    },

    unpublishedHeads,

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
          if (await orderedUnderShareLock(tx, id)) return 0;
          const rows = await waitingRows(tx, 'WHERE w.destination_id = ? ORDER BY w.source_id, w.delivery_id', [id]);
          const waiting: WaitingJob[] = [];
          for (const row of rows) {
            const job = await decoded(row);
            if (job) waiting.push(job);
          }
          // Published before the rows go: a crash in between publishes them again at start (at least once).
          if (waiting.length > 0) await publish(waiting);
          await tx.run('DELETE FROM ordered_waiting WHERE destination_id = ?', [id]);
          await tx.run('DELETE FROM ordered_heads WHERE destination_id = ?', [id]);
          return waiting.length;
        });
      }
      return released;
    },
  };
}
