import { expect } from 'chai';
import type { BrokerRecord } from '../broker/broker.js';
import { BrokerUnavailableError } from '../broker/errors.js';
import { UnavailableError } from '../errors/errors.js';
import { handleIsolatingPoison, isDependencyFailure, poisonReason } from './poison-records.js';
import { MalformedRecordError } from './malformed-record-error.js';

const record = (offset: number): BrokerRecord => ({ topic: 't', partition: 0, offset: String(offset), key: null, value: Buffer.from(String(offset)), headers: {}, timestamp: 0 });

/** A handler over real records that fails for the offsets given, the way it is told to. */
function handlerFailing(failures: Map<number, () => Error>) {
  const handled: number[] = [];
  const deadLettered: number[] = [];
  const marked: number[] = [];
  const run = async (records: BrokerRecord[]) => {
    for (const r of records) {
      const failure = failures.get(Number(r.offset));
      if (failure) throw failure();
    }
    handled.push(...records.map((r) => Number(r.offset)));
  };
  return {
    handled,
    deadLettered,
    marked,
    isolation: {
      all: run,
      one: (r: BrokerRecord) => run([r]),
      deadLetter: async (r: BrokerRecord) => void deadLettered.push(Number(r.offset)),
      markEvent: async (r: BrokerRecord) => void marked.push(Number(r.offset)),
    },
  };
}

describe('handleIsolatingPoison', () => {
  const batch = [record(1), record(2), record(3)];

  it('sets aside a record that fails on its own, marks its event, and handles the others', async () => {
    const h = handlerFailing(new Map([[2, () => new TypeError('boom')]]));
    await handleIsolatingPoison(batch, h.isolation);
    expect(h.handled).to.deep.equal([1, 3]);
    expect(h.deadLettered).to.deep.equal([2]);
    expect(h.marked).to.deep.equal([2]);
  });

  for (const [name, failure] of [
    ['the store is unavailable', () => new UnavailableError('database down')],
    ['the broker is unavailable', () => new BrokerUnavailableError('broker down')],
  ] as const) {
    it(`retries the whole batch (throws, dead-letters nothing) when ${name}`, async () => {
      const h = handlerFailing(new Map([[2, failure]]));
      const thrown = await handleIsolatingPoison(batch, h.isolation).catch((error: unknown) => error);
      expect(isDependencyFailure(thrown)).to.equal(true);
      expect(h.deadLettered).to.deep.equal([]);
    });
  }

  it('still moves on when marking the event fails for a reason of its own (the dead letter keeps the record)', async () => {
    const h = handlerFailing(new Map([[1, () => new RangeError('bad')]]));
    await handleIsolatingPoison(batch, { ...h.isolation, markEvent: async () => Promise.reject(new TypeError('cannot mark')) });
    expect(h.deadLettered).to.deep.equal([1]);
    expect(h.handled).to.deep.equal([2, 3]);
  });

  it('moves on too when marking the event throws at once, before it returns a promise (it cannot read the record)', async () => {
    const h = handlerFailing(new Map([[1, () => new MalformedRecordError(record(1), 'no header')]]));
    await handleIsolatingPoison(batch, {
      ...h.isolation,
      markEvent: () => {
        throw new MalformedRecordError(record(1), 'no header');
      },
    });
    expect(h.deadLettered).to.deep.equal([1]);
    expect(h.handled).to.deep.equal([2, 3]);
  });
});

describe('poisonReason', () => {
  it('names undecodable records malformed and any other record failure poison, with the error', () => {
    expect(poisonReason(new MalformedRecordError(record(1), 'no header'))).to.deep.equal({ kind: 'malformed_record', detail: 'MalformedRecordError: record t/0@1: no header' });
    expect(poisonReason(new TypeError('x'))).to.deep.equal({ kind: 'poison_record', detail: 'TypeError: x' });
  });
});
