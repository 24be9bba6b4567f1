import { randomBytes } from 'node:crypto';
import { isRelayError } from '../../../libs/errors/errors.js';
import type { Logger } from '../../../libs/logging/logger.js';
import type { SqlClient } from '../../../libs/store/sql-client.js';
import { snapshotEventIdsAfter, type EventFilter, type EventKey } from '../../../libs/ledger/event-queries.js';
import { dropSnapshot } from '../../../libs/replays/replay-snapshot.js';
import { MAX_BULK_REPLAY_DELIVERIES } from '../events/event-replay.js';

/** What one step of a job does with its next events: the bulk replay, wired by the composition root. */
export type ReplayEvents = (orgId: string, eventIds: string[], destinationIds: string[] | undefined) => Promise<{ eventsQueued: number; skipped: number }>;

/** Events a step replays by default, at most. */
const DEFAULT_STEP_SIZE = 100;

/**
 * Events per step such that a step, a bulk replay, stays within the deliveries one bulk replay may create
 * when each event goes to at most `maxDestinationsPerEvent` (RELAY_MAX_ROUTES_PER_SOURCE): 100 at the default 100.
 */
export const replayStepSize = (maxDestinationsPerEvent: number) =>
  Math.max(1, Math.min(DEFAULT_STEP_SIZE, Math.floor(MAX_BULK_REPLAY_DELIVERIES / maxDestinationsPerEvent)));

export interface ReplayRunnerOptions {
  sql: SqlClient;
  replayEvents: ReplayEvents;
  logger: Pick<Logger, 'warn' | 'error'>;
  now?: () => number;
  /** How often it looks for jobs when none is due (default 1 s); `wake` looks at once. */
  pollMs?: number;
  /** A job whose runner stops renewing this long is taken over by another (default 15 s). */
  leaseMs?: number;
  /** Events replayed per step, at most (default 100); fewer when `maxPerSecond` is lower. */
  stepSize?: number;
  /**
   * Event ids copied into a job's snapshot per step (default 2,000): each chunk is one short
   * transaction, the longest the API's own queries wait for on SQLite's one connection.
   */
  snapshotChunk?: number;
}

export interface ReplayRunner {
  start(): void;
  /** Looks for due jobs now (a job was just created). */
  wake(): void;
  /** Finishes the step in progress, lets its jobs go (another runner may take them at once), and stops. */
  stop(): Promise<void>;
}

interface DueJob {
  id: string;
  orgId: string;
  destinationIds: string | null;
  maxPerSecond: number;
  cursor: string | null;
  filter: string;
  /** The newest event matching at creation; null once its snapshot is copied. */
  untilCreatedAt: number | string | null;
  untilId: string | null;
  afterCreatedAt: number | string | null;
  afterId: string | null;
}

/**
 * Works the running replay jobs: each step takes the next events of a job's snapshot after its cursor,
 * replays them (the bulk replay: routes and their filters, or the named destinations), and moves the
 * cursor and the counts; the next step of that job comes no sooner than its pace allows. A lease in the
 * job row keeps two API processes off one job; the cursor makes a restarted process go on where it was.
 * Memory holds one step's ids per job, never the snapshot.
 */
export function createReplayRunner(options: ReplayRunnerOptions): ReplayRunner {
  const { sql, logger } = options;
  const now = options.now ?? Date.now;
  const pollMs = options.pollMs ?? 1000;
  const leaseMs = options.leaseMs ?? 15_000;
  const stepSize = options.stepSize ?? DEFAULT_STEP_SIZE;
  const snapshotChunk = options.snapshotChunk ?? 2000;
  const owner = `rnr_${randomBytes(8).toString('hex')}`;
  /** Per job: not before this instant (its pace). */
  const nextStepAt = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let stopped = true;
  let wakeAgain = false;

  async function dueJobs(at: number): Promise<DueJob[]> {
    return sql.all<DueJob>(
      `SELECT id, org_id AS "orgId", destination_ids AS "destinationIds", max_per_second AS "maxPerSecond", cursor_event_id AS "cursor", filter,
         snapshot_until_created_at AS "untilCreatedAt", snapshot_until_id AS "untilId", snapshot_after_created_at AS "afterCreatedAt", snapshot_after_id AS "afterId"
       FROM replays WHERE status = 'running' AND (lease_owner = ? OR lease_until IS NULL OR lease_until < ?) ORDER BY created_at`,
      [owner, at],
    );
  }

  const claim = async (job: DueJob, at: number) =>
    (await sql.run(
      `UPDATE replays SET lease_owner = ?, lease_until = ? WHERE id = ? AND status = 'running' AND (lease_owner = ? OR lease_until IS NULL OR lease_until < ?)`,
      [owner, at + leaseMs, job.id, owner, at],
    )) > 0;

  async function finish(id: string, status: 'completed' | 'failed', error: string | null = null): Promise<void> {
    await sql.run(`UPDATE replays SET status = ?, error = ?, finished_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ? AND status = 'running'`, [
      status,
      error,
      now(),
      id,
    ]);
    nextStepAt.delete(id);
    await dropSnapshot(sql, id);
  }

  /**
   * Copies the next chunk of the job's event ids, up to the newest event that matched at creation; the
   * job is replayed once its snapshot is whole (the snapshot is read in id order). Not paced: the pace
   * is for deliveries, and each chunk is a short statement, so the API's own queries go on between them.
   */
  async function copySnapshot(job: DueJob, untilId: string): Promise<void> {
    const key = (createdAt: number | string | null, id: string | null): EventKey | null => (id === null ? null : { createdAt: Number(createdAt), id });
    const stillRunning = await sql.transaction(async (tx) => {
      const { last, done } = await snapshotEventIdsAfter(tx, job.orgId, JSON.parse(job.filter) as EventFilter, job.id, {
        after: key(job.afterCreatedAt, job.afterId),
        until: key(job.untilCreatedAt, untilId)!,
        limit: snapshotChunk,
      });
      const progress = done
        ? // Whole: matched is what the snapshot holds (an event deleted since creation is not in it).
          `snapshot_until_created_at = NULL, snapshot_until_id = NULL, matched = (SELECT COUNT(*) FROM replay_events WHERE replay_id = ?)`
        : 'snapshot_after_created_at = ?, snapshot_after_id = ?';
      return tx.run(`UPDATE replays SET ${progress}, lease_until = ? WHERE id = ? AND status = 'running'`, [
        ...(done ? [job.id] : [last.createdAt, last.id]),
        now() + leaseMs,
        job.id,
      ]);
    });
    // Cancelled while the chunk was copied: its rows go too.
    if (stillRunning === 0) await dropSnapshot(sql, job.id);
  }

  async function step(job: DueJob): Promise<void> {
    if (job.untilId !== null) {
      await copySnapshot(job, job.untilId);
      return;
    }
    const startedAt = now();
    const size = Math.min(stepSize, job.maxPerSecond);
    const ids = (
      await sql.all<{ eventId: string }>(
        `SELECT event_id AS "eventId" FROM replay_events WHERE replay_id = ? AND event_id > ? ORDER BY event_id LIMIT ?`,
        [job.id, job.cursor ?? '', size],
      )
    ).map((row) => row.eventId);
    if (ids.length === 0) {
      await finish(job.id, 'completed');
      return;
    }
    const destinationIds = job.destinationIds === null ? undefined : (JSON.parse(job.destinationIds) as string[]);
    const result = await options.replayEvents(job.orgId, ids, destinationIds);
    await sql.run(`UPDATE replays SET cursor_event_id = ?, replayed = replayed + ?, skipped = skipped + ?, lease_until = ? WHERE id = ?`, [
      ids[ids.length - 1],
      result.eventsQueued,
      result.skipped,
      now() + leaseMs,
      job.id,
    ]);
    nextStepAt.set(job.id, startedAt + (ids.length * 1000) / job.maxPerSecond);
  }

  /** One pass over the due jobs; resolves with how long to wait before the next. */
  async function pass(): Promise<number> {
    const at = now();
    let wait = pollMs;
    for (const job of await dueJobs(at)) {
      if (stopped) break;
      const dueAt = nextStepAt.get(job.id) ?? 0;
      if (dueAt > now()) {
        wait = Math.min(wait, dueAt - now());
        continue;
      }
      if (!(await claim(job, now()))) continue;
      try {
        await step(job);
      } catch (error) {
        // A named destination deleted since: the job cannot go on. Anything else (store, broker) is retried.
        if (isRelayError(error) && !error.retriable && error.status < 500) {
          await finish(job.id, 'failed', error.message);
          continue;
        }
        logger.warn({ err: error, replayId: job.id }, 'Replay step failed; it is tried again');
        nextStepAt.set(job.id, now() + pollMs);
      }
      wait = Math.min(wait, Math.max(0, (nextStepAt.get(job.id) ?? now()) - now()));
    }
    return wait;
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, delayMs);
    timer.unref();
  }

  function run(): void {
    if (stopped) return;
    if (running) {
      wakeAgain = true;
      return;
    }
    running = pass()
      .catch((error: unknown) => {
        logger.error({ err: error }, 'Replay runner pass failed');
        return pollMs;
      })
      .then((wait) => {
        running = null;
        schedule(wakeAgain ? 0 : wait);
        wakeAgain = false;
      });
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    wake() {
      schedule(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await sql.run(`UPDATE replays SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ? AND status = 'running'`, [owner]);
    },
  };
}
