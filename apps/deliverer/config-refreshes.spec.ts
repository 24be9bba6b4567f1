import { expect } from 'chai';
import { BrokerRequestError, BrokerUnavailableError } from '../../libs/broker/errors.js';
import type { ConfigChange } from '../../libs/pipeline/config-change.js';
import { ManualTimers } from '../../libs/testing/manual-timers.js';
import { createConfigRefreshes } from './config-refreshes.js';

describe('the deliverer config refreshes', () => {
  const deleted = (id: string): ConfigChange => ({ kind: 'destination', action: 'deleted', orgId: 'org_1', id });
  /** Lets every settled promise's callbacks run. */
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  function refreshesFailing(failures: unknown[]) {
    const timers = new ManualTimers();
    const applied: string[] = [];
    const warnings: string[] = [];
    const refreshes = createConfigRefreshes({
      apply: async (change) => {
        applied.push(change.kind === 'destination' ? change.id : change.kind);
        const failure = failures.shift();
        if (failure) throw failure;
      },
      logger: { warn: (_fields: unknown, message: string) => void warnings.push(message) },
      schedule: timers.schedule,
      retry: { initialMs: 1000, maxMs: 4000 },
    });
    return { timers, applied, warnings, refreshes };
  }

  it('applies changes one after another, in the order they came', async () => {
    const { applied, refreshes } = refreshesFailing([]);
    for (const id of ['dst_a', 'dst_b', 'dst_c']) refreshes.push(deleted(id));
    await refreshes.stop();
    expect(applied).to.deep.equal(['dst_a', 'dst_b', 'dst_c']);
  });

  it('applies a change that failed on the broker again after a wait that doubles with each failure, until it succeeds', async () => {
    const unavailable = () => new BrokerUnavailableError('no leader');
    const { timers, applied, warnings, refreshes } = refreshesFailing([unavailable(), unavailable(), unavailable(), unavailable()]);
    refreshes.push(deleted('dst_a'));
    await settle();
    /** The tries made once `ms` more have passed. */
    const triesAfter = async (ms: number) => {
      timers.advance(ms);
      await settle();
      return applied.length;
    };
    expect(await triesAfter(999)).to.equal(1);
    expect(await triesAfter(1)).to.equal(2);
    expect(await triesAfter(1999)).to.equal(2);
    expect(await triesAfter(1)).to.equal(3);
    expect(await triesAfter(4000)).to.equal(4);
    // Past the cap the wait stays at it.
    expect(await triesAfter(3999)).to.equal(4);
    expect(await triesAfter(1)).to.equal(5);
    expect(warnings).to.deep.equal(Array(4).fill('deliverer refresh failed; applied again later'));
    expect(timers.pendingCount).to.equal(0);
    await refreshes.stop();
  });

  it('logs a failure that trying again cannot mend, and goes on with the next change', async () => {
    const { timers, applied, warnings, refreshes } = refreshesFailing([new BrokerRequestError('invalid topic')]);
    refreshes.push(deleted('dst_a'));
    refreshes.push(deleted('dst_b'));
    await settle();
    expect(timers.pendingCount).to.equal(0);
    await refreshes.stop();
    expect(applied).to.deep.equal(['dst_a', 'dst_b']);
    expect(warnings).to.deep.equal(['deliverer refresh failed']);
  });

  it('applies nothing again once stopped', async () => {
    const { timers, applied, refreshes } = refreshesFailing([new BrokerUnavailableError('no leader')]);
    refreshes.push(deleted('dst_a'));
    await settle();
    await refreshes.stop();
    timers.advance(5000);
    refreshes.push(deleted('dst_b'));
    await settle();
    expect(applied).to.deep.equal(['dst_a']);
  });
});
