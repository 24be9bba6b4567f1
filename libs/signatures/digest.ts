import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { DigestAlgorithm, DigestEncoding } from './verification-config.js';

/** HMAC over the parts in order, fed one by one so a large body is never copied. */
export function hmacDigest(algorithm: DigestAlgorithm, key: string | Buffer, parts: ReadonlyArray<string | Buffer>): Buffer {
  const hmac = createHmac(algorithm, key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

export function sha256Digest(body: Buffer): Buffer {
  return createHash('sha256').update(body).digest();
}

/** Constant-time equality; different lengths are simply unequal (timingSafeEqual would throw). */
export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Compares a signature as sent with the digest in the same text encoding, the way the providers'
 * own libraries do. Hex is case-insensitive and base64url padding optional, so both are normalized.
 */
export function encodedDigestMatches(provided: string, digest: Buffer, encoding: DigestEncoding): boolean {
  const normalized =
    encoding === 'hex' ? provided.toLowerCase() : encoding === 'base64url' ? provided.replace(/=+$/, '') : provided;
  return constantTimeEqual(Buffer.from(normalized), Buffer.from(digest.toString(encoding)));
}
