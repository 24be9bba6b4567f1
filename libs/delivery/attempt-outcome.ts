/**
 * Why an attempt failed. `http_status`: a complete non-2xx answer; `rejected`: a queue target took the
 * connection and refused the message (nack, unknown exchange, subject, stream or topic); every other kind:
 * no complete answer.
 */
export type AttemptErrorKind = 'timeout' | 'connect' | 'reset' | 'refused_address' | 'dns' | 'tls' | 'http_status' | 'rejected' | 'other';

/**
 * The result of one HTTP delivery attempt. A failed attempt is data, never an exception: the
 * deliverer records it, and the retry schedule and the circuit breaker read it.
 */
export interface AttemptOutcome {
  /** True only for a 2xx answer (redirects are not followed, so a 3xx is not ok). */
  ok: boolean;
  /**
   * null when no response arrived (timeout, network error, refused address). A response whose body
   * then failed keeps its status here, with `errorKind` saying what went wrong.
   */
  statusCode: number | null;
  latencyMs: number;
  /** The first 10 KB of the response body, UTF-8 decoded. */
  responseBody: string;
  /** A small subset worth recording (content-type, retry-after, location, ...). */
  responseHeaders: Record<string, string>;
  error?: string;
  errorKind?: AttemptErrorKind;
  /** From Retry-After on a 429 or 503. */
  retryAfterMs?: number;
}

/**
 * A `410 Gone` answer: the receiver says the endpoint will not come back (Standard Webhooks), so the
 * attempt is not retried and the destination is disabled.
 */
export const isGone = (outcome: Pick<AttemptOutcome, 'statusCode'>): boolean => outcome.statusCode === 410;
