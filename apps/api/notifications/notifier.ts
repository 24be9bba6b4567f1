import type { HttpSender } from '../../../libs/delivery/send-request.js';
import { ISSUE_KINDS } from '../../../libs/issues/issue-kinds.js';
import { countOpenIssues } from '../../../libs/issues/issues.js';
import type { Logger } from '../../../libs/logging/logger.js';
import type { RelayMetrics } from '../../../libs/metrics/relay-metrics.js';
import { recordChannelOutcome, selectChannelsByIds } from '../../../libs/notifications/channels.js';
import type { NotificationBody } from '../../../libs/notifications/notification-topics.js';
import { claimDueNotifications, dropNotification, retryNotificationAt, type OutboxRow } from '../../../libs/notifications/outbox.js';
import { sendNotification } from '../../../libs/notifications/send-notification.js';
import type { SecretBox } from '../../../libs/secrets/secret-box.js';
import type { SqlClient } from '../../../libs/store/sql-client.js';
import { backoffDelay, type BackoffOptions } from '../../../libs/time/backoff.js';
import { periodicRun } from '../../../libs/time/periodic-run.js';
import type { Schedule } from '../../../libs/time/schedule.js';
import { channelOpened, failureText } from './channel-secrets.js';

export interface NotifierOptions {
  sql: SqlClient;
  secrets: SecretBox;
  sender: HttpSender;
  metrics: Pick<RelayMetrics, 'notifications' | 'issuesOpen'>;
  logger: Logger;
  now?: () => number;
  schedule?: Schedule;
  /** Between the end of one look at the outbox and the next. */
  intervalMs?: number;
  /** Tries of one notification before it is given up (counted `failed`). */
  maxAttempts?: number;
  retryBackoff?: BackoffOptions;
}

/** Notifications one look takes; a longer outbox is drained over the next looks. */
const CLAIM_LIMIT = 50;
/** A claimed notification is someone's for this long: past it, a crashed notifier's claim lapses. */
const CLAIM_LEASE_MS = 60_000;
const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 5_000, maxMs: 30 * 60_000 };

/**
 * Drains the notification outbox beside the API: sends what is due, retries a failure later with backoff
 * (the row stays in the outbox, so a restart loses nothing), and gives one up after `maxAttempts`. It runs
 * on its own timer: nothing in the pipeline ever waits for a channel. Each look also refreshes `relay_issues_open`.
 */
export function createNotifier(options: NotifierOptions) {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? 1000;
  const maxAttempts = options.maxAttempts ?? 10;
  const backoff = options.retryBackoff ?? DEFAULT_BACKOFF;

  async function deliver(row: OutboxRow, channels: Awaited<ReturnType<typeof selectChannelsByIds>>): Promise<void> {
    const channel = channels.get(row.channelId);
    if (!channel || !channel.enabled) return dropNotification(options.sql, row);
    const outcome = await sendNotification(options.sender, channelOpened(options.secrets, channel), row.notificationId, JSON.parse(row.body) as NotificationBody, now());
    const at = now();
    if (outcome.ok) {
      options.metrics.notifications.inc({ outcome: 'delivered' });
      await recordChannelOutcome(options.sql, channel.id, at, null);
      return dropNotification(options.sql, row);
    }
    await recordChannelOutcome(options.sql, channel.id, at, failureText(outcome));
    if (row.attempts + 1 >= maxAttempts) {
      options.metrics.notifications.inc({ outcome: 'failed' });
      options.logger.warn({ channelId: channel.id, notificationId: row.notificationId }, 'notification given up');
      return dropNotification(options.sql, row);
    }
    options.metrics.notifications.inc({ outcome: 'retried' });
    await retryNotificationAt(options.sql, row, at + backoffDelay(backoff, row.attempts + 1));
  }

  async function refreshOpenIssues(): Promise<void> {
    const open = await countOpenIssues(options.sql);
    for (const kind of ISSUE_KINDS) options.metrics.issuesOpen.set({ kind }, open.get(kind) ?? 0);
  }

  /** One look: every due notification claimed, sent at once (each bounded by its timeout). */
  async function runOnce(): Promise<number> {
    const due = await claimDueNotifications(options.sql, now(), CLAIM_LEASE_MS, CLAIM_LIMIT);
    const channels = await selectChannelsByIds(options.sql, due.map((row) => row.channelId));
    await Promise.all(due.map((row) => deliver(row, channels)));
    await refreshOpenIssues();
    return due.length;
  }

  const runs = periodicRun({
    run: runOnce,
    intervalMs,
    onError: (error) => options.logger.error({ err: error }, 'notifier run failed'),
    schedule: options.schedule,
  });

  return {
    runOnce,
    start(): void {
      runs.start(0);
    },
    /** Stops looking; sends under way finish first. */
    stop: () => runs.stop(),
  };
}

export type Notifier = ReturnType<typeof createNotifier>;
