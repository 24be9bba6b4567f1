import { createHash } from 'node:crypto';

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** An event's `payloadHash`: `sha256:<hex>` of the body bytes as received (`hex` when already computed). */
export function payloadHash(body: Buffer, hex: string = sha256Hex(body)): string {
  return `sha256:${hex}`;
}
