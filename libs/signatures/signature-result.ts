/** Why a request failed verification; short and stable so it can be logged and counted. */
export type SignatureFailureReason =
  | 'unsupported_type'
  | 'missing_secret'
  | 'malformed_secret'
  | 'missing_header'
  | 'duplicate_header'
  | 'malformed_header'
  | 'malformed_url'
  | 'stale_timestamp'
  | 'body_hash_mismatch'
  | 'mismatch';

export interface SignatureFailure {
  valid: false;
  reason: SignatureFailureReason;
}

export type SignatureResult = { valid: true } | SignatureFailure;

export const VALID: SignatureResult = Object.freeze({ valid: true });

export function invalid(reason: SignatureFailureReason): SignatureFailure {
  return { valid: false, reason };
}

/** The last step of every verifier: did any candidate signature match. */
export function verdict(matched: boolean): SignatureResult {
  return matched ? VALID : invalid('mismatch');
}

export function isFailure(value: unknown): value is SignatureFailure {
  return typeof value === 'object' && value !== null && (value as SignatureFailure).valid === false;
}
