import type { AttemptOutcome } from '../../../libs/delivery/attempt-outcome.js';
import type { ChannelRow } from '../../../libs/notifications/channels.js';
import type { OpenChannel } from '../../../libs/notifications/send-notification.js';
import type { SecretBox } from '../../../libs/secrets/secret-box.js';

/** The channel's URL and secret, opened for a send. */
export function channelOpened(secrets: SecretBox, row: ChannelRow): OpenChannel {
  return { type: row.type, url: secrets.open(row.urlSealed), signingSecret: row.signingSecretSealed === null ? null : secrets.open(row.signingSecretSealed) };
}

/** A URL as a channel shows it: scheme and host, the rest hidden (a Slack URL's path is its credential). */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}/****`;
}

/** What a failed send says on the channel: the sender's error (it names no resolved address), or the status. */
export function failureText(outcome: AttemptOutcome): string {
  return outcome.error ?? `HTTP ${outcome.statusCode}`;
}
