import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/**
 * Standard Webhooks `webhook-signature` value: `v1,<base64 HMAC-SHA256(key, "<id>.<ts>.<body>")>`,
 * the key being the base64-decoded part after `whsec_`. The body is signed as its raw bytes.
 */
export function signStandardWebhook(secret: string, messageId: string, timestampSeconds: number, body: Buffer): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new Error('The signing secret is empty');
  const digest = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.`).update(body).digest('base64');
  return `v1,${digest}`;
}
