import { randomBytes } from 'node:crypto';

/** A new verification or delivery signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks form). */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
