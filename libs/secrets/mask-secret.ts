const MASK = '****';
const SHOWN_CHARS = 4;
// Showing the tail of a short secret would give a large share of it away.
const MIN_LENGTH_TO_SHOW_TAIL = 12;

/** How a secret appears in responses: `****` and its last 4 characters (only `****` for short secrets). */
export function maskSecret(secret: string): string {
  return secret.length < MIN_LENGTH_TO_SHOW_TAIL ? MASK : MASK + secret.slice(-SHOWN_CHARS);
}
