import { z } from 'zod';
import { specCode } from '../../../libs/http/validate.js';
import { retryPolicySchema } from '../../../libs/delivery/retry-schedule.js';
import { descriptionSchema, nameSchema, rateLimitSchema, slugSchema } from '../sources/source-schema.js';

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

const headerName = z.string().min(1).max(200).regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a valid HTTP header name');
const headerValue = z.string().max(4096).regex(/^[^\r\n\0]*$/, 'must not contain line breaks');

/** Headers the transport owns; a destination may not set them. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer']);

export const headersSchema = z
  .record(headerName, headerValue)
  .refine((h) => Object.keys(h).length <= 50, 'at most 50 headers')
  .refine((h) => Object.keys(h).every((name) => !RESERVED_HEADERS.has(name.toLowerCase())), 'must not set Host, Content-Length or hop-by-hop headers');

const secretText = z.string().min(1).max(4096);

export const AUTH_CONFIG_SCHEMAS = {
  none: z.strictObject({}),
  basic: z.strictObject({ username: z.string().min(1).max(512), password: secretText }),
  bearer: z.strictObject({ token: secretText }),
  api_key: z.strictObject({ headerName, key: secretText }),
  custom_header: z.strictObject({ headerName, headerValue: headerValue.min(1) }),
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

const destinationSettings = {
  name: nameSchema,
  url: urlSchema,
  method: z.enum(['POST', 'PUT', 'PATCH']),
  description: descriptionSchema,
  headers: headersSchema,
  authType: z.enum(AUTH_TYPES as [AuthType, ...AuthType[]]),
  authConfig: z.record(z.string(), z.unknown()).nullable(),
  timeoutMs: z.number().int().min(1000).max(60000),
  rateLimitPerMinute: rateLimitSchema,
  retryPolicy: retryPolicySchema,
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
  'createdAt',
  'updatedAt',
];

export const createDestinationSchema = z
  .strictObject(destinationSettings)
  .partial()
  .required({ name: true, url: true });

export const patchDestinationSchema = z.strictObject(destinationSettings).partial();

export type CreateDestinationInput = z.output<typeof createDestinationSchema>;
export type PatchDestinationInput = z.output<typeof patchDestinationSchema>;
