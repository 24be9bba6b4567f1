import { invalid, type SignatureFailure } from './signature-result.js';

/** Request headers as Node gives them, names lower-cased. */
export type HeaderMap = Record<string, string | string[] | undefined>;

/**
 * The one value of a header. A header sent twice is refused rather than guessed at: picking either
 * copy would let a forger choose which one is checked.
 */
export function singleHeader(headers: HeaderMap, name: string): string | SignatureFailure {
  const raw = Object.hasOwn(headers, name) ? headers[name] : undefined;
  const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => v !== undefined && v.trim() !== '');
  if (values.length === 0) return invalid('missing_header');
  if (values.length > 1) return invalid('duplicate_header');
  return values[0].trim();
}
