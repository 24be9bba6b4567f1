import { z } from 'zod';
import { specCode } from '../http/validate.js';
import { retryPolicyChangeSchema, retryPolicySchema } from '../delivery/retry-schedule.js';
import { descriptionSchema, nameSchema, rateLimitSchema, slugSchema } from '../sources/source-schema.js';
import { DESTINATION_TYPES } from './queue-target.js';

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
};

export const urlSchema = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine(isHttpUrl, { message: 'must be an absolute http or https URL without credentials', ...specCode('INVALID_URL') });

/** Headers the transport owns; a destination may not set them, neither in `headers` nor as its auth header. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection']);

const RESERVED_MESSAGE = 'must not set Host, Content-Length, Expect or hop-by-hop headers';
const isReserved = (name: string) => RESERVED_HEADERS.has(name.toLowerCase());

const headerName = z.string().min(1).max(200).regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a valid HTTP header name');
/** The header an `api_key` or `custom_header` credential is sent in. */
const authHeaderName = headerName.refine((name) => !isReserved(name), RESERVED_MESSAGE);

/**
 * What an HTTP header value can carry: tab, space, visible ASCII and the rest of Latin-1, nothing else
 * (no control characters, no characters beyond U+00FF). A value outside it could never be sent: every
 * attempt would fail, so it is refused when the destination is saved.
 */
const SENDABLE_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const SENDABLE_MESSAGE = 'must hold only characters an HTTP header can carry (visible Latin-1, space, tab; no control characters)';
const headerValue = z.string().max(4096).regex(SENDABLE_VALUE, SENDABLE_MESSAGE);

export const headersSchema = z
  .record(headerName, headerValue)
  .refine((h) => Object.keys(h).length <= 50, 'at most 50 headers')
  .refine((h) => !Object.keys(h).some(isReserved), RESERVED_MESSAGE);

const secretText = z.string().min(1).max(4096);
/** A credential sent as a header value as it is (a basic password is base64-encoded, so any text goes). */
const headerSecret = secretText.regex(SENDABLE_VALUE, SENDABLE_MESSAGE);

export const AUTH_CONFIG_SCHEMAS = {
  none: z.strictObject({}),
  basic: z.strictObject({ username: z.string().min(1).max(512), password: secretText }),
  bearer: z.strictObject({ token: headerSecret }),
  api_key: z.strictObject({ headerName: authHeaderName, key: headerSecret }),
  custom_header: z.strictObject({ headerName: authHeaderName, headerValue: headerValue.min(1) }),
} as const;
export type AuthType = keyof typeof AUTH_CONFIG_SCHEMAS;
export const AUTH_TYPES = Object.keys(AUTH_CONFIG_SCHEMAS) as AuthType[];

/** Which authConfig fields are secrets (masked in responses, redacted in exports). */
export const AUTH_SECRET_FIELDS: Record<AuthType, string[]> = {
  none: [],
  basic: ['password'],
  bearer: ['token'],
  api_key: ['key'],
  custom_header: ['headerValue'],
};

/** Three days, as Svix waits before disabling an endpoint. */
export const DEFAULT_AUTO_DISABLE_AFTER_SECONDS = 259_200;

const autoDisableAfterSecondsSchema = z.number().int().min(10).max(31_536_000).nullable();

const destinationSettings = {
  name: nameSchema,
  /** `http` (default) takes `url`; the queue types take `target`, validated per type (queue-target.ts). */
  type: z.enum(DESTINATION_TYPES),
  url: urlSchema,
  target: z.record(z.string(), z.unknown()),
  method: z.enum(['POST', 'PUT', 'PATCH']),
  description: descriptionSchema,
  headers: headersSchema,
  authType: z.enum(AUTH_TYPES as [AuthType, ...AuthType[]]),
  authConfig: z.record(z.string(), z.unknown()).nullable(),
  timeoutMs: z.number().int().min(1000).max(60000),
  rateLimitPerMinute: rateLimitSchema,
  retryPolicy: retryPolicySchema,
  ordering: z.enum(['none', 'source']),
  autoDisableAfterSeconds: autoDisableAfterSecondsSchema,
  enabled: z.boolean(),
  slug: slugSchema,
};

export const DESTINATION_READ_ONLY = [
  'id',
  'successRate',
  'avgLatency',
  'deliveriesCount',
  'lastDeliveryAt',
  'circuitState',
  'disabledReason',
  'disabledAt',
  'createdAt',
  'updatedAt',
];

export const createDestinationSchema = z
  .strictObject(destinationSettings)
  .partial()
  .required({ name: true });

/** PATCH: every field optional; `retryPolicy` may name some of its fields only (merged with the current policy). */
export const patchDestinationSchema = z.strictObject({ ...destinationSettings, retryPolicy: retryPolicyChangeSchema }).partial();

export type CreateDestinationInput = z.output<typeof createDestinationSchema>;
export type PatchDestinationInput = z.output<typeof patchDestinationSchema>;
