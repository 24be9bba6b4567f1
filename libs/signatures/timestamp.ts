import { DEFAULT_TOLERANCE_SECONDS } from './verification-config.js';
import { invalid, type SignatureFailure } from './signature-result.js';

const UNIX_SECONDS = /^\d{1,12}$/;

/**
 * Checks a signed unix-seconds timestamp against the clock. The window is symmetric: a timestamp
 * far in the future is as suspect as an old one (Slack and Standard Webhooks both reject it).
 */
export function checkTimestamp(text: string, nowMs: number, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS): SignatureFailure | undefined {
  if (!UNIX_SECONDS.test(text)) return invalid('malformed_header');
  const skewSeconds = Math.abs(Math.floor(nowMs / 1000) - Number(text));
  return skewSeconds > toleranceSeconds ? invalid('stale_timestamp') : undefined;
}
