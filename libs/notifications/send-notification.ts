import type { AttemptOutcome } from '../delivery/attempt-outcome.js';
import type { HttpSender } from '../delivery/send-request.js';
import { signStandardWebhook } from '../delivery/standard-webhooks-signature.js';
import type { ChannelType } from './channels.js';
import type { NotificationBody } from './notification-topics.js';

/** A channel as the sender needs it, its URL and secret opened. */
export interface OpenChannel {
  type: ChannelType;
  url: string;
  signingSecret: string | null;
}

/** A channel gets this long to answer. */
export const NOTIFICATION_TIMEOUT_MS = 10_000;

const TITLES: Record<NotificationBody['type'], string> = {
  'issue.opened': 'Issue opened',
  'issue.reopened': 'Issue reopened',
  'issue.resolved': 'Issue resolved',
  'destination.disabled': 'Destination disabled',
  'destination.auto_disable_warning': 'Destination will be disabled',
  test: 'Test notification',
};

type Fields = Record<string, unknown>;

/** One line for a person reading Slack: what happened, to what, and the figures that say why. */
export function slackText(body: NotificationBody): string {
  const data = (body.data ?? {}) as Fields;
  const parts = [`*${TITLES[body.type]}*`];
  if (body.type.startsWith('issue.')) {
    parts.push(`${data.kind} on destination ${data.destinationId}: ${data.failedAttempts} failed attempts`);
    if (data.lastError) parts.push(`last error: ${data.lastError}`);
  } else if (body.type.startsWith('destination.')) {
    parts.push(`${data.name} (${data.id}): failing since ${data.failingSince}, ${data.failedAttempts} failed attempts`);
    if (body.type === 'destination.disabled') parts.push(`reason: ${data.disabledReason}`);
    else parts.push(`disabled after ${data.autoDisableAfterSeconds} s of failures`);
  } else parts.push('the channel works');
  return parts.join(' — ');
}

/**
 * Sends one notification: a `webhook` channel gets the body signed with Standard Webhooks headers under its
 * own secret (the notification id as `webhook-id`), a `slack` channel `{text}`. Never rejects: a failure is
 * an outcome, as for deliveries, through the same guarded sender (the destination address rules).
 */
export function sendNotification(sender: HttpSender, channel: OpenChannel, notificationId: string, body: NotificationBody, nowMs: number): Promise<AttemptOutcome> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'webhook-relay-notifications' };
  if (channel.type === 'slack') {
    return sender.send({ method: 'POST', url: channel.url, headers, body: Buffer.from(JSON.stringify({ text: slackText(body) })) }, { timeoutMs: NOTIFICATION_TIMEOUT_MS });
  }
  const raw = Buffer.from(JSON.stringify(body));
  const timestamp = Math.floor(nowMs / 1000);
  headers['webhook-id'] = notificationId;
  headers['webhook-timestamp'] = String(timestamp);
  headers['webhook-signature'] = signStandardWebhook(channel.signingSecret ?? '', notificationId, timestamp, raw);
  return sender.send({ method: 'POST', url: channel.url, headers, body: raw }, { timeoutMs: NOTIFICATION_TIMEOUT_MS });
}
