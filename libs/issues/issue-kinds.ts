import type { AttemptRecord } from '../pipeline/attempt-record.js';

/** What went wrong, as an operator acts on it: one issue per destination and kind. */
export const ISSUE_KINDS = ['http_4xx', 'http_5xx', 'timeout', 'connection', 'tls', 'rejected', 'transformation'] as const;
export type IssueKind = (typeof ISSUE_KINDS)[number];

export const ISSUE_STATUSES = ['open', 'acknowledged', 'resolved', 'ignored'] as const;
export type IssueStatus = (typeof ISSUE_STATUSES)[number];

/**
 * Attempts recorded for a reason of the relay's own (a deleted destination, a record that cannot be
 * delivered): nothing the destination's operator can fix, so no issue.
 */
const NOT_THE_DESTINATIONS = new Set(['destination_deleted', 'poison_record']);

/**
 * The issue kind of a failed attempt, null for a failure that is not the destination's. A complete
 * answer below 500 that is not 2xx (a 3xx is not followed) is `http_4xx`; a queue target's refusal
 * arrives as errorKind `rejected`; every other network failure is `connection`.
 */
export function failureKind(attempt: Pick<AttemptRecord, 'ok' | 'statusCode' | 'errorKind'>): IssueKind | null {
  if (attempt.ok || (attempt.errorKind !== null && NOT_THE_DESTINATIONS.has(attempt.errorKind))) return null;
  if (attempt.errorKind === 'http_status' && attempt.statusCode !== null) return attempt.statusCode >= 500 ? 'http_5xx' : 'http_4xx';
  if (attempt.errorKind === 'timeout' || attempt.errorKind === 'tls' || attempt.errorKind === 'rejected') return attempt.errorKind;
  return 'connection';
}
