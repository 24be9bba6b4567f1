import { createHmac } from 'node:crypto';

/** Every bench body's size: a typical webhook. */
export const BODY_BYTES = 1024;

let sequence = 0;

/**
 * A 1 KB JSON body no other request carries (neither dedup nor any cache can short-circuit it), with the
 * headers the code host would sign it with; `delivery` is also its provider id.
 */
export function signedWebhook(secret: string): { delivery: string; body: string; headers: Record<string, string> } {
  const delivery = `${process.pid}-${++sequence}`;
  const head = `{"action":"opened","delivery":"${delivery}","pull_request":{"number":${sequence}},"padding":"`;
  const body = `${head}${'x'.repeat(BODY_BYTES - head.length - 2)}"}`;
  return {
    delivery,
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': delivery,
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
  };
}
