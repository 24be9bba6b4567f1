import { expect } from 'chai';
import Database from 'better-sqlite3';
import { BrokerUnavailableError } from '../../libs/broker/errors.js';
import { RateLimitedError, RelayError, StorageFullError, StoreUnavailableError } from '../../libs/errors/errors.js';
import { ingestDeadline, withRetryAfter } from './ingest-deadline.js';

const never = () => new Promise<never>(() => undefined);

async function failure(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected the wait to fail');
}

describe('ingestDeadline', () => {
  it('answers STORE_UNAVAILABLE with a Retry-After once a store read has not answered within the budget', async () => {
    const started = performance.now();
    const error = await failure(ingestDeadline(50).wait('store', never()));
    expect(performance.now() - started).to.be.below(500);
    expect(error).to.be.instanceOf(StoreUnavailableError);
    expect(error).to.include({ status: 503, code: 'STORE_UNAVAILABLE', retriable: true, retryAfterMs: 5_000 });
  });

  it('answers BROKER_UNAVAILABLE once the append has not been acknowledged within the budget', async () => {
    const error = await failure(ingestDeadline(50).wait('broker', never()));
    expect(error).to.be.instanceOf(BrokerUnavailableError);
  });

  it('shares one budget between the waits of a request: a slow store read leaves less for the append', async () => {
    const deadline = ingestDeadline(300);
    await deadline.wait('store', new Promise((resolve) => setTimeout(resolve, 250)));
    const started = performance.now();
    expect(await failure(deadline.wait('broker', never()))).to.be.instanceOf(BrokerUnavailableError);
    expect(performance.now() - started).to.be.below(200);
  });

  it('answers STORE_UNAVAILABLE for a store that fails, keeping the driver error out of the message', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const error = (await failure(ingestDeadline().wait('store', Promise.reject(refused)))) as RelayError;
    expect(error).to.be.instanceOf(StoreUnavailableError);
    expect(error.message).not.to.include('5432');
    expect(error.cause).to.equal(refused);
  });

  it("answers STORAGE_FULL for SQLite's SQLITE_FULL and a file write's ENOSPC, wrapped or not", async () => {
    const sqliteFull = new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
    const noSpace = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });
    const wrapped = new BrokerUnavailableError('The embedded log could not write', sqliteFull);
    const typeorm = Object.assign(new Error('query failed'), { driverError: sqliteFull });
    for (const [dependency, cause] of [['store', sqliteFull], ['store', noSpace], ['broker', wrapped], ['store', typeorm]] as const) {
      const error = await failure(ingestDeadline().wait(dependency, Promise.reject(cause)));
      expect(error, `${dependency}: ${(cause as Error).message}`).to.be.instanceOf(StorageFullError);
      expect(error).to.include({ status: 503, code: 'STORAGE_FULL', retryAfterMs: 30_000 });
    }
  });

  it('lets refusals that are not about availability through as they are, and a programming error stays one', async () => {
    const limited = new RateLimitedError(1000);
    expect(await failure(ingestDeadline().wait('store', Promise.reject(limited)))).to.equal(limited);
    const bug = new TypeError('x is undefined');
    expect(await failure(ingestDeadline().wait('store', Promise.reject(bug)))).to.equal(bug);
  });
});

describe('withRetryAfter', () => {
  it('gives a 503 that names no wait the default Retry-After, and leaves others alone', () => {
    const broker = withRetryAfter(new BrokerUnavailableError('closed'));
    expect(broker).to.include({ status: 503, code: 'BROKER_UNAVAILABLE', retryAfterMs: 5_000 });
    const limited = new RateLimitedError(700);
    expect(withRetryAfter(limited)).to.equal(limited);
  });
});
