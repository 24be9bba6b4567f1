import { newId } from '../ids/ids.js';
import { enqueueNotification, type Notification } from '../notifications/outbox.js';
import type { AttemptRecord } from '../pipeline/attempt-record.js';
import type { SqlClient } from '../store/sql-client.js';
import { isoTime } from '../time/iso-time.js';
import { failureKind, type IssueKind } from './issue-kinds.js';
import { ISSUE_SAMPLE_SIZE, issueView, selectIssuesOf, upsertIssues, type IssueRow } from './issues.js';
import { disableFailingDestination, selectStreakedDestinations, upsertStreaks, type FailureStreak, type StreakedDestination } from './failure-streaks.js';

/** Successful attempts in a row to a destination that resolve its open and acknowledged issues. */
export const RESOLVING_SUCCESSES = 10;
/** Failed attempts a destination needs, besides the time, before it is disabled. */
export const AUTO_DISABLE_MIN_FAILURES = 5;

/** A destination that the batch disabled, for the recorder to announce once the transaction is committed. */
export interface DisabledDestination {
  orgId: string;
  destinationId: string;
}

/** One destination's attempts of the batch, folded in memory: its issues, its streak, what to notify. */
interface DestinationFold {
  destination: StreakedDestination;
  issues: Map<IssueKind, IssueRow>;
  changed: Set<IssueRow>;
  streak: FailureStreak;
  notifications: Notification[];
  disabledAt: number | null;
}

const destinationData = (fold: DestinationFold) => ({
  id: fold.destination.id,
  name: fold.destination.name,
  url: fold.destination.url,
  enabled: fold.disabledAt === null && fold.destination.enabled,
  disabledReason: fold.disabledAt === null ? null : 'failing',
  disabledAt: isoTime(fold.disabledAt),
  autoDisableAfterSeconds: fold.destination.autoDisableAfterSeconds,
  failingSince: isoTime(fold.streak.failingSince),
  failedAttempts: fold.streak.failedAttempts,
});

function notify(fold: DestinationFold, topic: Notification['topic'], data: unknown, at: number): void {
  fold.notifications.push({ orgId: fold.destination.orgId, topic, data, at });
}

function succeeded(fold: DestinationFold, attempt: AttemptRecord): void {
  // Capped: a healthy destination's streak then stays as stored, and costs no write.
  fold.streak = { failingSince: null, failedAttempts: 0, successes: Math.min(fold.streak.successes + 1, RESOLVING_SUCCESSES), warned: false };
  if (fold.streak.successes < RESOLVING_SUCCESSES) return;
  for (const issue of fold.issues.values()) {
    if (issue.status !== 'open' && issue.status !== 'acknowledged') continue;
    Object.assign(issue, { status: 'resolved', updatedAt: attempt.completedAt });
    fold.changed.add(issue);
    notify(fold, 'issue.resolved', issueView(issue), attempt.completedAt);
  }
}

/** What an issue records of one failure: an attempt's, or a transformation's (no attempt, no status). */
type Failure = Pick<AttemptRecord, 'eventId' | 'completedAt' | 'statusCode' | 'error'>;

/** Opens the issue of this kind, reopens it when resolved, or counts the failure in it. */
function countInIssue(fold: DestinationFold, attempt: Failure, kind: IssueKind): void {
  const at = attempt.completedAt;
  let issue = fold.issues.get(kind);
  let topic: Notification['topic'] | null = null;
  if (!issue) {
    issue = { id: newId('iss'), orgId: fold.destination.orgId, destinationId: fold.destination.id, kind, status: 'open', firstSeenAt: at, lastSeenAt: at,
      failedAttempts: 0, lastStatusCode: null, lastError: null, sampleEventIds: [], createdAt: at, updatedAt: at };
    fold.issues.set(kind, issue);
    topic = 'issue.opened';
  } else if (issue.status === 'resolved') {
    issue.status = 'open';
    topic = 'issue.reopened';
  }
  issue.lastSeenAt = Math.max(issue.lastSeenAt, at);
  issue.failedAttempts += 1;
  issue.lastStatusCode = attempt.statusCode;
  issue.lastError = attempt.error;
  issue.sampleEventIds = [attempt.eventId, ...issue.sampleEventIds.filter((id) => id !== attempt.eventId)].slice(0, ISSUE_SAMPLE_SIZE);
  issue.updatedAt = at;
  fold.changed.add(issue);
  if (topic) notify(fold, topic, issueView(issue), at);
}

/** The auto-disable clock: a warning once at half the time, then disabled (with at least 5 failures). */
function checkAutoDisable(fold: DestinationFold, at: number): void {
  const afterSeconds = fold.destination.autoDisableAfterSeconds;
  if (afterSeconds === null || !fold.destination.enabled || fold.disabledAt !== null || fold.streak.failingSince === null) return;
  const failingMs = at - fold.streak.failingSince;
  if (!fold.streak.warned && failingMs >= (afterSeconds * 1000) / 2) {
    fold.streak.warned = true;
    notify(fold, 'destination.auto_disable_warning', destinationData(fold), at);
  }
  if (failingMs >= afterSeconds * 1000 && fold.streak.failedAttempts >= AUTO_DISABLE_MIN_FAILURES) {
    fold.disabledAt = at;
    notify(fold, 'destination.disabled', destinationData(fold), at);
  }
}

function failed(fold: DestinationFold, attempt: AttemptRecord, kind: IssueKind): void {
  const { streak } = fold;
  fold.streak = { ...streak, failingSince: streak.failingSince ?? attempt.completedAt, failedAttempts: streak.failedAttempts + 1, successes: 0 };
  countInIssue(fold, attempt, kind);
  checkAutoDisable(fold, attempt.completedAt);
}

const sameStreak = (a: FailureStreak, b: FailureStreak) =>
  a.failingSince === b.failingSince && a.failedAttempts === b.failedAttempts && a.successes === b.successes && a.warned === b.warned;

/**
 * The recorder's step for issues and auto-disable, inside its transaction: two reads (the destinations
 * with their streaks, and their issues) and a few writes per batch, whatever its number of attempts.
 * Attempts count in the order they completed. Notifications go to the outbox in the same transaction,
 * so an issue opened is never left unannounced, nor announced twice when a batch is written again.
 */
export async function foldAttemptsIntoIssues(tx: SqlClient, attempts: AttemptRecord[]): Promise<DisabledDestination[]> {
  if (attempts.length === 0) return [];
  const folds = await loadFolds(tx, attempts.map((a) => a.destinationId));
  const ordered = [...attempts].sort((a, b) => a.completedAt - b.completedAt || a.attemptNumber - b.attemptNumber);
  for (const attempt of ordered) {
    const fold = folds.get(attempt.destinationId);
    if (!fold) continue;
    const kind = failureKind(attempt);
    if (attempt.ok) succeeded(fold, attempt);
    else if (kind) failed(fold, attempt, kind);
  }
  const all = [...folds.values()];
  await writeIssues(tx, all);
  await upsertStreaks(tx, all.filter((fold) => !sameStreak(fold.streak, fold.destination.streak)).map((fold) => ({ destinationId: fold.destination.id, streak: fold.streak })));
  const disabled: DisabledDestination[] = [];
  for (const fold of all) {
    if (fold.disabledAt !== null && (await disableFailingDestination(tx, fold.destination.id, fold.disabledAt))) {
      disabled.push({ orgId: fold.destination.orgId, destinationId: fold.destination.id });
    }
  }
  return disabled;
}

/** The destinations (locked) with their streaks and issues, read in two statements. */
async function loadFolds(tx: SqlClient, destinationIds: string[]): Promise<Map<string, DestinationFold>> {
  const destinations = await selectStreakedDestinations(tx, destinationIds);
  const issues = await selectIssuesOf(tx, destinations.map((d) => d.id));
  const folds = new Map<string, DestinationFold>(
    destinations.map((destination) => [destination.id, { destination, issues: new Map(), changed: new Set(), streak: destination.streak, notifications: [], disabledAt: null }]),
  );
  for (const issue of issues) folds.get(issue.destinationId)?.issues.set(issue.kind, issue);
  return folds;
}

/** The issues the folds changed, in one statement, and their notifications into the outbox. */
async function writeIssues(tx: SqlClient, folds: DestinationFold[]): Promise<void> {
  await upsertIssues(tx, folds.flatMap((fold) => [...fold.changed]));
  for (const notification of folds.flatMap((fold) => fold.notifications)) await enqueueNotification(tx, notification);
}

/**
 * Transformation failures (deliveries created `failed`, with no attempt) count in the destination's
 * `transformation` issue, in the router's transaction. They are not attempts: the auto-disable clock and
 * the run of successes are left as they are.
 */
export async function foldTransformationFailures(tx: SqlClient, failures: { destinationId: string; eventId: string; error: string }[], at: number): Promise<void> {
  if (failures.length === 0) return;
  const folds = await loadFolds(tx, failures.map((f) => f.destinationId));
  for (const failure of failures) {
    const fold = folds.get(failure.destinationId);
    if (fold) countInIssue(fold, { eventId: failure.eventId, completedAt: at, statusCode: null, error: failure.error }, 'transformation');
  }
  await writeIssues(tx, [...folds.values()]);
}
