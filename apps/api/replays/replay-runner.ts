import { randomBytes } from 'node:crypto';
import { isRelayError } from '../../../libs/errors/errors.js';
import type { Logger } from '../../../libs/logging/logger.js';
import type { SqlClient } from '../../../libs/store/sql-client.js';
import { snapshotEventIdsAfter, type EventFilter, type EventKey } from '../../../libs/ledger/event-queries.js';
import {
  advanceReplayCursor,
  claimReplay,
  dueReplays,
  finishReplay,
  releaseReplayLeases,
  saveSnapshotProgress,
  snapshotIdsAfter,
  type DueReplay,
} from '../../../libs/replays/replays.js';
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

/** What a runner's steps share: its settings, its lease owner id, and each job's pace. */
interface RunnerParts {
  sql: SqlClient;
  replayEvents: ReplayEvents;
  now: () => number;
  leaseMs: number;
  stepSize: number;
  snapshotChunk: number;
  owner: string;
  /** Per job: not before this instant (its pace). */
  nextStepAt: Map<string, number>;
}

async function finish(parts: RunnerParts, id: string, status: 'completed' | 'failed', error: string | null = null): Promise<void> {
  await finishReplay(parts.sql, id, status, error, parts.now());
  parts.nextStepAt.delete(id);
  await dropSnapshot(parts.sql, id);
}

const eventKey = (createdAt: number | null, id: string | null): EventKey | null => (id === null ? null : { createdAt: Number(createdAt), id });

/**
 * Copies the next chunk of the job's event ids, up to the newest event that matched at creation; the
 * job is replayed once its snapshot is whole (the snapshot is read in id order). Not paced: the pace
 * is for deliveries, and each chunk is a short statement, so the API's own queries go on between them.
 */
async function copySnapshot(parts: RunnerParts, job: DueReplay, untilId: string): Promise<void> {
  const stillRunning = await parts.sql.transaction(async (tx) => {
    const { last, done } = await snapshotEventIdsAfter(tx, job.orgId, JSON.parse(job.filter) as EventFilter, job.id, {
      after: eventKey(job.afterCreatedAt, job.afterId),
      until: eventKey(job.untilCreatedAt, untilId)!,
      limit: parts.snapshotChunk,
    });
    return saveSnapshotProgress(tx, job.id, done ? null : last, parts.now() + parts.leaseMs);
  });
  // Cancelled while the chunk was copied: its rows go too.
  if (!stillRunning) await dropSnapshot(parts.sql, job.id);
}

async function step(parts: RunnerParts, job: DueReplay): Promise<void> {
  if (job.untilId !== null) {
    await copySnapshot(parts, job, job.untilId);
    return;
  }
  const startedAt = parts.now();
  const ids = await snapshotIdsAfter(parts.sql, job.id, job.cursor, Math.min(parts.stepSize, job.maxPerSecond));
  if (ids.length === 0) {
    await finish(parts, job.id, 'completed');
    return;
  }
  const destinationIds = job.destinationIds === null ? undefined : (JSON.parse(job.destinationIds) as string[]);
  const result = await parts.replayEvents(job.orgId, ids, destinationIds);
  await advanceReplayCursor(parts.sql, job.id, { cursor: ids[ids.length - 1]!, replayed: result.eventsQueued, skipped: result.skipped, leaseUntil: parts.now() + parts.leaseMs });
  parts.nextStepAt.set(job.id, startedAt + (ids.length * 1000) / job.maxPerSecond);
}

/** One pass over the due jobs, until `stopped` says otherwise; resolves with how long to wait before the next. */
async function pass(parts: RunnerParts, logger: ReplayRunnerOptions['logger'], pollMs: number, stopped: () => boolean): Promise<number> {
  const { now, nextStepAt } = parts;
  let wait = pollMs;
  for (const job of await dueReplays(parts.sql, parts.owner, now())) {
    if (stopped()) break;
    const dueAt = nextStepAt.get(job.id) ?? 0;
    if (dueAt > now()) {
      wait = Math.min(wait, dueAt - now());
      continue;
    }
    if (!(await claimReplay(parts.sql, job.id, parts.owner, now(), now() + parts.leaseMs))) continue;
    try {
      await step(parts, job);
    } catch (error) {
      // A named destination deleted since: the job cannot go on. Anything else (store, broker) is retried.
      if (isRelayError(error) && !error.retriable && error.status < 500) {
        await finish(parts, job.id, 'failed', error.message);
        continue;
      }
      logger.warn({ err: error, replayId: job.id }, 'Replay step failed; it is tried again');
      nextStepAt.set(job.id, now() + pollMs);
    }
    wait = Math.min(wait, Math.max(0, (nextStepAt.get(job.id) ?? now()) - now()));
  }
  return wait;
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
  const pollMs = options.pollMs ?? 1000;
  const parts: RunnerParts = {
    sql,
    replayEvents: options.replayEvents,
    now: options.now ?? Date.now,
    leaseMs: options.leaseMs ?? 15_000,
    stepSize: options.stepSize ?? DEFAULT_STEP_SIZE,
    snapshotChunk: options.snapshotChunk ?? 2000,
    owner: `rnr_${randomBytes(8).toString('hex')}`,
    nextStepAt: new Map(),
  };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let stopped = true;
  let wakeAgain = false;

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
    running = pass(parts, logger, pollMs, () => stopped)
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
      await releaseReplayLeases(sql, parts.owner);
    },
  };
}
