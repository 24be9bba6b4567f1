import { NotFoundError, ValidationError } from '../../../libs/errors/errors.js';
import { newId } from '../../../libs/ids/ids.js';
import {
  deleteChannel as deleteRow,
  insertChannel,
  listChannels as listRows,
  recordChannelOutcome,
  selectChannel,
  updateChannel as updateRow,
  type ChannelChanges,
  type ChannelRow,
  type ChannelType,
} from '../../../libs/notifications/channels.js';
import { NOTIFICATION_TOPICS, type NotificationTopic } from '../../../libs/notifications/notification-topics.js';
import { sendNotification } from '../../../libs/notifications/send-notification.js';
import { generateSigningSecret } from '../../../libs/secrets/signing-secret.js';
import type { PageQuery } from '../../../libs/store/org-scoped-repository.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import { isoTime } from '../../../libs/time/iso-time.js';
import type { ApiDeps } from '../api-deps.js';
import { TEST_ANSWER_BODY_BYTES } from '../destinations/destination-test.js';
import { channelOpened, failureText, shownUrl } from './channel-secrets.js';

export interface ChannelInput {
  name: string;
  type: ChannelType;
  url: string;
  topics?: NotificationTopic[];
  enabled?: boolean;
}

export type ChannelPatch = Partial<ChannelInput>;

type ChannelDeps = Pick<ApiDeps, 'store' | 'secrets' | 'now' | 'checkTarget' | 'httpSender'>;

export function channelView(row: ChannelRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    url: row.urlShown,
    topics: row.topics,
    enabled: row.enabled,
    lastDeliveredAt: isoTime(row.lastDeliveredAt),
    lastFailureAt: isoTime(row.lastFailureAt),
    lastError: row.lastError,
    createdAt: isoTime(row.createdAt)!,
  };
}

async function requireChannel(deps: Pick<ApiDeps, 'store'>, tenant: Tenant, id: string): Promise<ChannelRow> {
  const row = await selectChannel(deps.store.sql, tenant.org.id, id);
  if (!row) throw new NotFoundError(`Notification channel ${id} not found`);
  return row;
}

export async function listChannels(deps: ChannelDeps, tenant: Tenant, query: PageQuery) {
  const page = await listRows(deps.store.sql, tenant.org.id, query);
  return { rows: page.rows.map(channelView), total: page.total };
}

export async function getChannel(deps: ChannelDeps, tenant: Tenant, id: string) {
  return channelView(await requireChannel(deps, tenant, id));
}

/** A channel's URL follows the destination URL rules: private and metadata addresses refused when saved. */
export async function createChannel(deps: ChannelDeps, tenant: Tenant, input: ChannelInput) {
  await deps.checkTarget(input.url, 'url');
  const now = deps.now();
  const row: ChannelRow = {
    id: newId('nch'),
    orgId: tenant.org.id,
    name: input.name,
    type: input.type,
    urlSealed: deps.secrets.seal(input.url),
    urlShown: shownUrl(input.url),
    topics: [...new Set(input.topics ?? NOTIFICATION_TOPICS)],
    enabled: input.enabled ?? true,
    signingSecretSealed: input.type === 'webhook' ? deps.secrets.seal(generateSigningSecret()) : null,
    lastDeliveredAt: null,
    lastFailureAt: null,
    lastError: null,
    createdAt: now,
    updatedAt: now,
  };
  await insertChannel(deps.store.sql, row);
  return channelView(row);
}

/** The URL shown (`https://host/****`) sent back keeps the stored one. */
export async function updateChannel(deps: ChannelDeps, tenant: Tenant, id: string, patch: ChannelPatch) {
  const current = await requireChannel(deps, tenant, id);
  // Sent back unchanged, as a fetched channel carries it; a channel's type is fixed when it is made.
  if (patch.type !== undefined && patch.type !== current.type) throw new ValidationError('A channel cannot change type', [{ field: 'type', message: 'is fixed when the channel is created' }]);
  const changes: ChannelChanges = { name: patch.name, enabled: patch.enabled, topics: patch.topics && [...new Set(patch.topics)] };
  if (patch.url !== undefined && patch.url !== current.urlShown) {
    await deps.checkTarget(patch.url, 'url');
    Object.assign(changes, { urlSealed: deps.secrets.seal(patch.url), urlShown: shownUrl(patch.url) });
  }
  await updateRow(deps.store.sql, tenant.org.id, id, changes, deps.now());
  return getChannel(deps, tenant, id);
}

export async function deleteChannel(deps: ChannelDeps, tenant: Tenant, id: string): Promise<void> {
  if (!(await deleteRow(deps.store.sql, tenant.org.id, id))) throw new NotFoundError(`Notification channel ${id} not found`);
}

async function requireWebhookChannel(deps: ChannelDeps, tenant: Tenant, id: string): Promise<ChannelRow & { signingSecretSealed: string }> {
  const row = await requireChannel(deps, tenant, id);
  if (row.signingSecretSealed === null) throw new NotFoundError(`Notification channel ${id} is a ${row.type} channel: it has no signing secret`);
  return { ...row, signingSecretSealed: row.signingSecretSealed };
}

export async function getChannelSigningSecret(deps: ChannelDeps, tenant: Tenant, id: string) {
  return { secret: deps.secrets.open((await requireWebhookChannel(deps, tenant, id)).signingSecretSealed) };
}

/** A new secret at once; notifications still queued are signed with it when they are sent. */
export async function rotateChannelSigningSecret(deps: ChannelDeps, tenant: Tenant, id: string) {
  await requireWebhookChannel(deps, tenant, id);
  const secret = generateSigningSecret();
  await updateRow(deps.store.sql, tenant.org.id, id, { signingSecretSealed: deps.secrets.seal(secret) }, deps.now());
  return { secret, message: 'Signing secret rotated. Notifications from now on are signed with this secret.' };
}

/** Sends a `test` notification now, whatever the channel's topics, and shows what came of it. */
export async function testChannel(deps: ChannelDeps, tenant: Tenant, id: string) {
  const row = await requireChannel(deps, tenant, id);
  const now = deps.now();
  const body = { type: 'test' as const, createdAt: isoTime(now)!, data: { channel: channelView(row) } };
  const outcome = await sendNotification(deps.httpSender, channelOpened(deps.secrets, row), newId('ntf'), body, now);
  const error = outcome.ok ? null : failureText(outcome).slice(0, TEST_ANSWER_BODY_BYTES);
  await recordChannelOutcome(deps.store.sql, row.id, deps.now(), error);
  return { delivered: outcome.ok, statusCode: outcome.statusCode, error };
}
