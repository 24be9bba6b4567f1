import { createHash } from 'node:crypto';

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** An event's `payloadHash`: `sha256:<hex>` of the body bytes as received. */
export function payloadHash(body: Buffer): string {
  return `sha256:${sha256Hex(body)}`;
}
