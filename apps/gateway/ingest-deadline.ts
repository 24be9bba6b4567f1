import { BrokerUnavailableError } from '../../libs/broker/errors.js';
import { RelayError, StorageFullError, StoreUnavailableError } from '../../libs/errors/errors.js';
import { isStorageFull } from '../../libs/storage/storage-full.js';
import { TimedOutError, within } from '../../libs/time/within.js';

/** What ingest waits on: a store read or write (source lookup, rate windows, dedup claim), or the broker's append. */
export type IngestDependency = 'store' | 'broker';

/**
 * How long one ingest request may wait on its dependencies, in all: under the 1 s DESIGN promises for an
 * answer, with room for the request's own work. Reading the body is the client's pace and is not counted.
 */
export const INGEST_WAIT_BUDGET_MS = 800;

/** The Retry-After of a 503 whose error names none. */
export const DEFAULT_RETRY_AFTER_MS = 5_000;

/** What a sender is told to wait when the broker could not take its webhook: a new leader is seconds away. */
export const BROKER_RETRY_AFTER_MS = 1_000;

/**
 * The waits of one ingest request, bounded together: each gets what the budget has left, and a failure
 * or time-out becomes the 503 that names what could not promise durability (DESIGN "Unavailable answers").
 */
export function ingestDeadline(budgetMs = INGEST_WAIT_BUDGET_MS, clock: () => number = () => performance.now()) {
  let spentMs = 0;
  return {
    async wait<T>(dependency: IngestDependency, work: Promise<T>): Promise<T> {
      const started = clock();
      try {
        return await within(Math.max(0, budgetMs - spentMs), work, `the ${dependency}`);
      } catch (error) {
        throw unavailableAnswer(dependency, error);
      } finally {
        spentMs += clock() - started;
      }
    },
  };
}

export type IngestDeadline = ReturnType<typeof ingestDeadline>;

/** Whether a wait's 503 is its running out of time: what it waited on runs on, and may still succeed (a publish may land). */
export function ranOutOfTime(error: unknown): boolean {
  return error instanceof RelayError && error.cause instanceof TimedOutError;
}

/** What a provider is told: the driver's own words (addresses, SQL) stay in the cause. */
const STORE_FAILED = 'The store cannot serve this request now; nothing was acknowledged';

/**
 * A dependency's failure as ingest answers it. A store that fails in any way but a programming error
 * (TypeError, RangeError) is unavailable, as for the store's own classification of PostgreSQL errors.
 */
function unavailableAnswer(dependency: IngestDependency, error: unknown): unknown {
  if (isStorageFull(error)) return error instanceof StorageFullError ? error : new StorageFullError(error);
  if (error instanceof TimedOutError) {
    return dependency === 'store' ? new StoreUnavailableError(STORE_FAILED, error) : new BrokerUnavailableError(`The broker gave no answer within ${error.ms} ms`, error, BROKER_RETRY_AFTER_MS);
  }
  if (error instanceof BrokerUnavailableError && error.retryAfterMs === undefined) {
    return new BrokerUnavailableError(`The broker could not take the webhook: ${error.message}`, error, BROKER_RETRY_AFTER_MS);
  }
  if (error instanceof RelayError) return error.status === 503 && dependency === 'store' ? new StoreUnavailableError(STORE_FAILED, error) : error;
  if (dependency === 'store' && error instanceof Error && !(error instanceof TypeError) && !(error instanceof RangeError)) {
    return new StoreUnavailableError(STORE_FAILED, error);
  }
  return error;
}

/** Every 503 ingest answers carries Retry-After: an error that names no wait gets the default. */
export function withRetryAfter(error: RelayError): RelayError {
  if (error.status !== 503 || error.retryAfterMs !== undefined) return error;
  return new RelayError(503, error.code, error.message, { retriable: true, retryAfterMs: DEFAULT_RETRY_AFTER_MS, cause: error });
}
