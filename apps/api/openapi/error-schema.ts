import { z } from 'zod';

/**
 * Every `code` an error answer can carry, on any route. A new error code belongs here too: the response
 * checks of the API tests refuse a code the document does not list.
 */
export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'INVALID_JSON',
  'INVALID_PATH',
  'INVALID_SLUG',
  'INVALID_URL',
  'INVALID_SIGNATURE',
  'PRIVATE_DESTINATION',
  'BAD_REQUEST',
  'MALFORMED_REQUEST',
  'REQUEST_ABORTED',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'SOURCE_DISABLED',
  'IP_NOT_ALLOWED',
  'NOT_FOUND',
  'RESOURCE_NOT_FOUND',
  'SOURCE_NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'REQUEST_TIMEOUT',
  'DUPLICATE_SLUG',
  'DUPLICATE_ROUTE',
  'DUPLICATE_NAME',
  'IN_USE',
  'IMPORT_CONFLICT',
  'LAST_ADMIN_KEY',
  'REPLAY_FINISHED',
  'LIMIT_REACHED',
  'PAYLOAD_EXPIRED',
  'PAYLOAD_UNREADABLE',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED',
  'HEADERS_TOO_LARGE',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
  'BROKER_UNAVAILABLE',
  'STORE_UNAVAILABLE',
  'STORAGE_FULL',
  'OVERLOADED',
] as const;

/** The one error body (SPEC 7, DESIGN "Status codes"). */
export const errorSchema = z
  .object({
    error: z.string().meta({ description: 'The HTTP reason phrase', example: 'Bad Request' }),
    message: z.string(),
    code: z.enum(ERROR_CODES),
    details: z.array(z.object({ field: z.string(), message: z.string() })).optional().meta({ description: 'The fields at fault (validation errors)' }),
    retryAfter: z.number().int().min(1).optional().meta({ description: 'Seconds to wait (RATE_LIMITED, and every 503 at ingest); also in the Retry-After header' }),
  })
  .meta({ id: 'Error' });

type ErrorBody = z.input<typeof errorSchema>;

/** What each documented error status means, with a typical body. */
export const ERROR_RESPONSES: Record<number, { description: string; example: ErrorBody }> = {
  400: {
    description: 'The request is invalid (VALIDATION_ERROR with `details`, INVALID_JSON, INVALID_SLUG, INVALID_URL, INVALID_PATH, PRIVATE_DESTINATION for a target at a private, loopback or metadata address, INVALID_SIGNATURE at ingest); nothing changed',
    example: { error: 'Bad Request', message: 'Request body is invalid: name: is required', code: 'VALIDATION_ERROR', details: [{ field: 'name', message: 'is required' }] },
  },
  401: {
    description: 'No API key, or one that does not exist (any more)',
    example: { error: 'Unauthorized', message: 'The API key is not valid', code: 'UNAUTHORIZED' },
  },
  403: {
    description: "The key's scope does not allow this call (FORBIDDEN); at ingest, SOURCE_DISABLED or IP_NOT_ALLOWED",
    example: { error: 'Forbidden', message: 'This API key has the "read" scope; POST /api/sources needs "write"', code: 'FORBIDDEN' },
  },
  404: {
    description: "No such resource in the key's organization (RESOURCE_NOT_FOUND), or no source at this ingest URL (SOURCE_NOT_FOUND)",
    example: { error: 'Not Found', message: 'Source src_01JDQ4Z6W8K3M5N7P9R1T3V5X7 not found', code: 'RESOURCE_NOT_FOUND' },
  },
  409: {
    description: 'Conflicts with what exists (DUPLICATE_SLUG, DUPLICATE_ROUTE, DUPLICATE_NAME, IN_USE, IMPORT_CONFLICT, LAST_ADMIN_KEY, REPLAY_FINISHED, LIMIT_REACHED), or a stored payload that cannot be opened (PAYLOAD_UNREADABLE); nothing changed',
    example: { error: 'Conflict', message: 'A source with slug "github" already exists', code: 'DUPLICATE_SLUG' },
  },
  410: {
    description: 'The payload was deleted under the retention policy',
    example: { error: 'Gone', message: 'The payload of event evt_01JDQ5A1B3C5D7E9F1G3H5J7K9 has expired', code: 'PAYLOAD_EXPIRED' },
  },
  413: {
    description: 'The body is larger than allowed (ingest: the plan limit, named in the message)',
    example: { error: 'Payload Too Large', message: 'Payload exceeds the plan limit of 5242880 bytes', code: 'PAYLOAD_TOO_LARGE' },
  },
  415: {
    description: 'A request body that is not JSON',
    example: { error: 'Unsupported Media Type', message: 'Request bodies must be application/json', code: 'UNSUPPORTED_MEDIA_TYPE' },
  },
  429: {
    description: "Rate limit exceeded (at ingest the source's, under /api the API key's); retry after `retryAfter` seconds (also the Retry-After header)",
    example: { error: 'Too Many Requests', message: 'Rate limit exceeded', code: 'RATE_LIMITED', retryAfter: 1 },
  },
  500: {
    description: 'An unexpected fault (never expected: it is logged and is a bug); nothing half-done stays',
    example: { error: 'Internal Server Error', message: 'An unexpected error occurred; it has been logged', code: 'INTERNAL_ERROR' },
  },
  503: {
    description:
      'The store or the broker cannot be reached right now; nothing was acknowledged, try again. At ingest, always with `retryAfter` and the Retry-After header, and one of OVERLOADED, BROKER_UNAVAILABLE, STORE_UNAVAILABLE (a store read the request needs failed), STORAGE_FULL (the data directory\'s disk is full)',
    example: { error: 'Service Unavailable', message: 'The store is not reachable', code: 'SERVICE_UNAVAILABLE' },
  },
};
