/**
 * A value in the form responses show secrets in (`****` and at most 4 more characters). Clients that send a
 * fetched resource back send these masks; they stand for "the secret I was not shown", never for a new secret.
 */
export function isMaskedValue(value: unknown): boolean {
  return typeof value === 'string' && /^\*{4}.{0,4}$/su.test(value);
}
