import { expect } from 'chai';
import { ManualTimers } from '../testing/manual-timers.js';
import { tickBatcher, type TickBatcherOptions } from './tick-batcher.js';

describe('tickBatcher', () => {
  it('runs the calls made in one event-loop turn as one batch and answers each in order', async () => {
    const batches: number[][] = [];
    const double = tickBatcher(async (items: number[]) => {
      batches.push(items);
      return items.map((item) => item * 2);
    });
    const results = await Promise.all([1, 2, 3].map(double));
    expect(results).to.deep.equal([2, 4, 6]);
    expect(batches).to.deep.equal([[1, 2, 3]]);
  });

  it('starts a new batch for calls made after the previous one was taken', async () => {
    const batches: number[][] = [];
    const echo = tickBatcher(async (items: number[]) => {
      batches.push(items);
      return items;
    });
    await echo(1);
    await Promise.all([echo(2), echo(3)]);
    expect(batches).to.deep.equal([[1], [2, 3]]);
  });

  it('splits more than maxBatch pending calls into several batches', async () => {
    const sizes: number[] = [];
    const echo = tickBatcher(async (items: number[]) => {
      sizes.push(items.length);
      return items;
    }, { maxBatch: 4 });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => echo(i)));
    expect(results).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(sizes).to.deep.equal([4, 4, 2]);
  });

  it('fails every call of a batch whose run throws, and keeps serving later batches', async () => {
    let fail = true;
    const flaky = tickBatcher(async (items: number[]) => {
      if (fail) throw new Error('store down');
      return items;
    });
    const outcomes = await Promise.allSettled([flaky(1), flaky(2)]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['rejected', 'rejected']);
    fail = false;
    expect(await flaky(3)).to.equal(3);
  });

  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  /** A serial batcher whose first batch waits for `answerFirst` and then succeeds or throws. */
  function gatedFirstBatch(firstFails: boolean, options: TickBatcherOptions = {}) {
    const batches: number[][] = [];
    let answerFirst!: () => void;
    const gate = new Promise<void>((resolve) => (answerFirst = resolve));
    const echo = tickBatcher(
      async (items: number[]) => {
        batches.push(items);
        if (batches.length > 1) return items;
        await gate;
        if (firstFails) throw new Error('broker down');
        return items;
      },
      { serial: true, ...options },
    );
    return { echo, batches, answerFirst };
  }

  describe('serial', () => {

    it('holds the calls made while a batch runs and runs them together once it is answered', async () => {
      const { echo, batches, answerFirst } = gatedFirstBatch(false);
      const calls = [echo(1)];
      await nextTurn();
      calls.push(echo(2));
      await nextTurn();
      calls.push(echo(3));
      await nextTurn();
      expect(batches).to.deep.equal([[1]]);
      answerFirst();
      expect(await Promise.all(calls)).to.deep.equal([1, 2, 3]);
      expect(batches).to.deep.equal([[1], [2, 3]]);
    });

    it('fails each call of a batch whose run throws, and runs the calls that waited for it', async () => {
      const { echo, answerFirst } = gatedFirstBatch(true);
      const failed = [echo(1), echo(2)].map((call) => call.then(() => 'answered', (error: Error) => error.message));
      await nextTurn();
      const waited = echo(3);
      answerFirst();
      expect(await Promise.all(failed)).to.deep.equal(['broker down', 'broker down']);
      expect(await waited).to.equal(3);
    });
  });

  describe('minIntervalMs', () => {
    function intervalBatcher() {
      const timers = new ManualTimers(1_000);
      const batches: number[][] = [];
      const echo = tickBatcher(
        async (items: number[]) => {
          batches.push(items);
          return items;
        },
        { serial: true, minIntervalMs: 20, now: timers.now, schedule: timers.schedule },
      );
      return { echo, batches, timers };
    }

    it('runs a call made after a quiet spell at the next turn, with no wait', async () => {
      const { echo, batches, timers } = intervalBatcher();
      expect(await echo(1)).to.equal(1);
      timers.advance(20);
      expect(await echo(2)).to.equal(2);
      expect(batches).to.deep.equal([[1], [2]]);
      expect(timers.pendingCount).to.equal(0);
    });

    it('holds the calls made within the interval of the last batch until it ends, then runs them together', async () => {
      const { echo, batches, timers } = intervalBatcher();
      await echo(1);
      timers.advance(5);
      const later = [echo(2)];
      await nextTurn();
      timers.advance(10);
      later.push(echo(3));
      await nextTurn();
      expect(batches).to.deep.equal([[1]]);
      timers.advance(4);
      await nextTurn();
      expect(batches).to.deep.equal([[1]]);
      timers.advance(1);
      expect(await Promise.all(later)).to.deep.equal([2, 3]);
      expect(batches).to.deep.equal([[1], [2, 3]]);
    });

    it('waits for nothing more once a batch that ran longer than the interval is answered', async () => {
      const timers = new ManualTimers(0);
      const { echo, batches, answerFirst } = gatedFirstBatch(false, { minIntervalMs: 20, now: timers.now, schedule: timers.schedule });
      const first = echo(1);
      await nextTurn();
      const second = echo(2);
      timers.advance(30);
      answerFirst();
      expect(await Promise.all([first, second])).to.deep.equal([1, 2]);
      expect(batches).to.deep.equal([[1], [2]]);
      expect(timers.pendingCount).to.equal(0);
    });
  });

  describe('drained', () => {
    it('resolves once every call made so far is answered', async () => {
      const answered: number[] = [];
      const record = tickBatcher(
        async (items: number[]) => {
          answered.push(...items);
          return items;
        },
        { serial: true },
      );
      void record(1);
      void record(2);
      await record.drained();
      expect(answered).to.deep.equal([1, 2]);
    });
  });
});
