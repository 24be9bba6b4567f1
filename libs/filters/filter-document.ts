import { parsePayload } from '../payload/payload-document.js';
import type { FilterDocument } from './route-filter.js';

export interface ReceivedWebhook {
  body: Buffer;
  contentType: string | null;
  /** Names lower-cased, as received. */
  headers: Record<string, string | string[]>;
  query?: Record<string, string | string[]> | null;
  path?: string | null;
}

/**
 * The document route filters match: `body` is the parsed JSON, a form body as an object of its fields,
 * any other body (or one that does not parse under its content type, or is too large or deep to read
 * as fields) its raw text.
 */
export function filterDocument(webhook: ReceivedWebhook): FilterDocument {
  const parsed = parsePayload(webhook.body, webhook.contentType);
  return {
    body: parsed && parsed.kind !== 'unreadable' ? parsed.value : webhook.body.toString('utf8'),
    headers: webhook.headers,
    query: webhook.query ?? {},
    path: webhook.path ?? '',
  };
}
