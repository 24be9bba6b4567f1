const MASK = '****';
const SHOWN_CHARS = 4;
// Showing the tail of a short secret would give a large share of it away (DESIGN section 7: 8 or fewer).
const LONGEST_FULLY_HIDDEN = 8;

/** How a secret appears in responses: `****` and its last 4 characters (only `****` for 8 characters or fewer). */
export function maskSecret(secret: string): string {
  return secret.length <= LONGEST_FULLY_HIDDEN ? MASK : MASK + secret.slice(-SHOWN_CHARS);
}
