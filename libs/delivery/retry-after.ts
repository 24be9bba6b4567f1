const HTTP_DATE_START = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i;

/**
 * Milliseconds until the moment a `Retry-After` value names: delta-seconds (`120`) or an HTTP date.
 * undefined when absent or unreadable; a date in the past gives 0.
 */
export function parseRetryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // HTTP dates (IMF-fixdate, RFC 850, asctime) all start with a day name; Date.parse alone would take '-5' as a year.
  if (!HTTP_DATE_START.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
