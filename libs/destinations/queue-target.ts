import { z } from 'zod';
import { isMaskedValue } from '../secrets/masked-value.js';

/** `http` takes `url`; every other type takes `target` instead (DESIGN 7, "Destinations beyond HTTP"). */
export const DESTINATION_TYPES = ['http', 'rabbitmq', 'nats', 'kafka', 'redis'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];
export type QueueType = Exclude<DestinationType, 'http'>;

/** The shown form of the credentials inside a target URL, and of `sasl.password`. */
export const MASK = '****';

function urlWith(schemes: string[]) {
  const described = schemes.map((scheme) => `${scheme}//`).join(' or ');
  return z
    .string()
    .max(2048, 'must be at most 2048 characters')
    .refine(
      (value) => {
        try {
          const url = new URL(value);
          return schemes.includes(url.protocol) && url.hostname !== '';
        } catch {
          return false;
        }
      },
      { message: `must be an absolute ${described} URL` },
    );
}

const hostPort = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port');
/** Topics under `relay.` are the relay's own pipeline. */
const kafkaTopic = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,249}$/, 'must be 1 to 249 letters, digits, dots, underscores or dashes')
  .refine((topic) => !topic.startsWith('relay.'), 'must not start with relay. (the relay\'s own topics)');

export const TARGET_SCHEMAS = {
  rabbitmq: z.strictObject({
    url: urlWith(['amqp:', 'amqps:']),
    /** '' is the default exchange, which routes by queue name. */
    exchange: z.string().max(255),
    routingKey: z.string().max(255),
  }),
  nats: z.strictObject({
    url: urlWith(['nats:', 'tls:']),
    subject: z.string().min(1).max(255).regex(/^[^\s*>]+$/, 'must be a subject without spaces or wildcards'),
    jetstream: z.boolean().default(true),
  }),
  kafka: z.strictObject({
    brokers: z.array(hostPort).min(1).max(16),
    topic: kafkaTopic,
    key: z.enum(['sourceId', 'eventId']).default('sourceId'),
    ssl: z.boolean().default(false),
    sasl: z
      .strictObject({ mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']), username: z.string().min(1).max(512), password: z.string().min(1).max(4096) })
      .optional(),
  }),
  redis: z.strictObject({
    url: urlWith(['redis:', 'rediss:']),
    stream: z.string().min(1).max(1024),
    maxLen: z.number().int().min(1).optional(),
  }),
} as const;

export type RabbitmqTarget = z.output<typeof TARGET_SCHEMAS.rabbitmq>;
export type NatsTarget = z.output<typeof TARGET_SCHEMAS.nats>;
export type KafkaTarget = z.output<typeof TARGET_SCHEMAS.kafka>;
export type RedisTarget = z.output<typeof TARGET_SCHEMAS.redis>;

/** A destination's target with its type, opened (credentials in clear): what a queue sender connects with. */
export type QueueTarget =
  | { type: 'rabbitmq'; target: RabbitmqTarget }
  | { type: 'nats'; target: NatsTarget }
  | { type: 'kafka'; target: KafkaTarget }
  | { type: 'redis'; target: RedisTarget };

/** The URL with its credentials shown as `****`. */
function maskedUrl(value: string): string {
  const url = new URL(value);
  if (url.username === '' && url.password === '') return value;
  return value.replace(/\/\/[^@/]*@/, `//${MASK}@`);
}

/** The target as every view and export shows it: credentials in the URL and `sasl.password` as `****`. */
export function maskedTarget({ type, target }: QueueTarget): Record<string, unknown> {
  if (type === 'kafka') return { ...target, ...(target.sasl ? { sasl: { ...target.sasl, password: MASK } } : {}) };
  return { ...target, url: maskedUrl(target.url) };
}

/**
 * A target sent back as it was shown: a masked URL's credentials and a masked `sasl.password` stand for
 * the stored ones (of the same type), as masked `authConfig` values do.
 */
export function unmaskedTarget(type: QueueType, sent: Record<string, unknown>, current: QueueTarget | null): Record<string, unknown> {
  if (!current || current.type !== type) return sent;
  if (current.type === 'kafka') {
    const sasl = sent.sasl as Record<string, unknown> | undefined;
    if (sasl && isMaskedValue(sasl.password) && current.target.sasl) return { ...sent, sasl: { ...sasl, password: current.target.sasl.password } };
    return sent;
  }
  if (typeof sent.url !== 'string' || !sent.url.includes(`//${MASK}@`)) return sent;
  const credentials = /\/\/([^@/]*)@/.exec(current.target.url)?.[1];
  return credentials === undefined ? sent : { ...sent, url: sent.url.replace(`//${MASK}@`, `//${credentials}@`) };
}

/**
 * The target without the masked credentials it still holds (a masked URL's credentials, a `sasl` whose
 * password is masked), and the fields that lost them: what an import of an export without secrets keeps
 * when no stored value stands for the masks.
 */
export function maskedCredentialsLeftOut(type: QueueType, sent: Record<string, unknown>): { target: Record<string, unknown>; leftOut: string[] } {
  if (type === 'kafka') {
    const { sasl, ...rest } = sent;
    return sasl && isMaskedValue((sasl as Record<string, unknown>).password) ? { target: rest, leftOut: ['target.sasl'] } : { target: sent, leftOut: [] };
  }
  if (typeof sent.url !== 'string' || !sent.url.includes(`//${MASK}@`)) return { target: sent, leftOut: [] };
  return { target: { ...sent, url: sent.url.replace(`//${MASK}@`, '//') }, leftOut: ['target.url'] };
}

/** The places a target connects to (URLs or `host:port`), for the private-destination policy. */
export function targetAddresses({ type, target }: QueueTarget): { address: string; field: string }[] {
  if (type === 'kafka') return target.brokers.map((broker, index) => ({ address: broker, field: `target.brokers.${index}` }));
  return [{ address: target.url, field: 'target.url' }];
}
