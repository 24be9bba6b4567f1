import { z } from 'zod';
import { maskSecret } from '../../../libs/secrets/mask-secret.js';
import type { DestinationRow } from '../../../libs/store/entities/destination.js';
import type { ApiDeps } from '../api-deps.js';
import { AUTH_SECRET_FIELDS, AUTH_TYPES, type AuthType } from '../../../libs/destinations/destination-schema.js';
import { destinationSettings } from '../../../libs/destinations/destination-settings.js';
import { maskedHeaders } from '../../../libs/destinations/destination-headers.js';
import { openQueueTarget } from '../../../libs/destinations/queue-target-seal.js';
import { DESTINATION_TYPES, maskedTarget, TARGET_SCHEMAS } from '../../../libs/destinations/queue-target.js';
import { isoTime } from '../../../libs/time/iso-time.js';
import { EXAMPLE_TIME, timestamp } from '../openapi/shared-schemas.js';

/** Delivery statistics shown on a destination; a destination with no deliveries yet has none. */
export interface DestinationStats {
  successRate: number | null;
  avgLatency: number | null;
  deliveriesCount: number;
  lastDeliveryAt: number | null;
  circuitState: 'closed' | 'open' | 'half_open';
}

export const NO_DELIVERIES: DestinationStats = {
  successRate: null,
  avgLatency: null,
  deliveriesCount: 0,
  lastDeliveryAt: null,
  circuitState: 'closed',
};

/** The credentials with their secret fields masked (`****` + last 4). */
function maskedAuthConfig(deps: ApiDeps, row: DestinationRow): Record<string, unknown> {
  if (row.authConfigSealed === null) return {};
  const config = JSON.parse(deps.secrets.open(row.authConfigSealed)) as Record<string, string>;
  for (const field of AUTH_SECRET_FIELDS[row.authType]) if (config[field] !== undefined) config[field] = maskSecret(config[field]);
  return config;
}

/** A queue destination's target with the credentials in its URL and `sasl.password` as `****`. */
function maskedQueueTarget(deps: ApiDeps, row: DestinationRow): Record<string, unknown> | null {
  const queue = openQueueTarget(row, deps.secrets);
  return queue ? maskedTarget(queue) : null;
}

export function destinationView(deps: ApiDeps, row: DestinationRow, stats: DestinationStats = NO_DELIVERIES) {
  return {
    id: row.id,
    ...destinationSettings(row, { headers: maskedHeaders(deps.secrets, row), authConfig: maskedAuthConfig(deps, row), target: maskedQueueTarget(deps, row) }),
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    disabledAt: isoTime(row.disabledAt),
    successRate: stats.successRate,
    avgLatency: stats.avgLatency,
    deliveriesCount: stats.deliveriesCount,
    lastDeliveryAt: isoTime(stats.lastDeliveryAt),
    circuitState: stats.circuitState,
    createdAt: isoTime(row.createdAt),
    updatedAt: isoTime(row.updatedAt),
  };
}

/** The list form: id, name, url, enabled, successRate, avgLatency, deliveriesCount (SPEC 2.3). */
export function destinationSummary(row: DestinationRow, stats: DestinationStats = NO_DELIVERIES) {
  return {
    id: row.id,
    name: row.name,
    // SPEC's summary of an HTTP destination stays as it was; a queue destination says its type instead of a url.
    ...(row.type === 'http' ? { url: row.url } : { type: row.type }),
    enabled: row.enabled,
    successRate: stats.successRate,
    avgLatency: stats.avgLatency,
    deliveriesCount: stats.deliveriesCount,
  };
}

const retryPolicyView = z
  .object({ maxRetries: z.number().int(), initialDelay: z.number().int(), maxDelay: z.number().int(), backoffMultiplier: z.number() })
  .meta({ id: 'RetryPolicy' });

export const circuitStateSchema = z.enum(['closed', 'open', 'half_open']);

export const destinationViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    type: z.enum(DESTINATION_TYPES).meta({ description: '`http` delivers to `url`; the queue types publish to `target`' }),
    url: z.string().optional().meta({ description: 'For type http only' }),
    target: z
      .union([
        TARGET_SCHEMAS.rabbitmq.meta({ id: 'RabbitmqTarget' }),
        TARGET_SCHEMAS.nats.meta({ id: 'NatsTarget' }),
        TARGET_SCHEMAS.kafka.meta({ id: 'KafkaTarget' }),
        TARGET_SCHEMAS.redis.meta({ id: 'RedisTarget' }),
      ])
      .optional()
      .meta({ description: 'For the queue types only; credentials in `url` and `sasl.password` are shown as `****`' }),
    method: z.enum(['POST', 'PUT', 'PATCH']),
    description: z.string().nullable(),
    headers: z.record(z.string(), z.string()).meta({ description: 'Sent with every delivery; the values are secrets, masked (`****` and the last 4 characters)' }),
    authType: z.enum(AUTH_TYPES as [AuthType, ...AuthType[]]),
    authConfig: z.record(z.string(), z.string()).meta({ description: 'Credentials for authType, secret fields masked' }),
    timeoutMs: z.number().int(),
    rateLimitPerMinute: z.number().int().nullable(),
    retryPolicy: retryPolicyView,
    ordering: z.enum(['none', 'source']).meta({ description: '`source`: the events of one source are delivered strictly in the order received' }),
    autoDisableAfterSeconds: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Disabled (`failing`) once every attempt has failed for this long, with at least 5 failed attempts; a warning at half of it; null: never' }),
    enabled: z.boolean(),
    disabledReason: z
      .enum(['gone', 'manual', 'failing'])
      .nullable()
      .meta({ description: '`gone`: the destination answered 410 Gone; `manual`: disabled by PATCH; `failing`: every attempt failed for autoDisableAfterSeconds' }),
    disabledAt: timestamp.nullable(),
    successRate: z.number().nullable(),
    avgLatency: z.number().nullable(),
    deliveriesCount: z.number().int(),
    lastDeliveryAt: timestamp.nullable(),
    circuitState: circuitStateSchema,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Destination' });

export const destinationSummarySchema = destinationViewSchema
  .extend({ type: destinationViewSchema.shape.type.optional().meta({ description: 'Shown for the queue types, in place of url' }) })
  .pick({ id: true, name: true, type: true, url: true, enabled: true, successRate: true, avgLatency: true, deliveriesCount: true })
  .meta({ id: 'DestinationSummary' });

export const destinationExample: z.input<typeof destinationViewSchema> = {
  id: 'dst_01JDQ4ZB2C4E6G8J0K2M4P6R8T',
  name: 'Orders service',
  slug: 'orders-service',
  type: 'http',
  url: 'https://orders.example.com/hooks',
  method: 'POST',
  description: null,
  headers: { 'X-Team-Token': '****7c1e' },
  authType: 'bearer',
  authConfig: { token: '****9f3a' },
  timeoutMs: 30000,
  rateLimitPerMinute: 600,
  retryPolicy: { maxRetries: 5, initialDelay: 1000, maxDelay: 60000, backoffMultiplier: 2 },
  ordering: 'none',
  autoDisableAfterSeconds: 259200,
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  successRate: 99.2,
  avgLatency: 84,
  deliveriesCount: 1250,
  lastDeliveryAt: EXAMPLE_TIME,
  circuitState: 'closed',
  createdAt: EXAMPLE_TIME,
  updatedAt: EXAMPLE_TIME,
};

export const destinationSummaryExample: z.input<typeof destinationSummarySchema> = {
  id: destinationExample.id,
  name: destinationExample.name,
  url: destinationExample.url,
  enabled: true,
  successRate: 99.2,
  avgLatency: 84,
  deliveriesCount: 1250,
};
