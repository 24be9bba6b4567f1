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
      retryMs: 1000,
    });
    return { timers, applied, warnings, refreshes };
  }

  it('applies changes one after another, in the order they came', async () => {
    const { applied, refreshes } = refreshesFailing([]);
    for (const id of ['dst_a', 'dst_b', 'dst_c']) refreshes.push(deleted(id));
    await refreshes.stop();
    expect(applied).to.deep.equal(['dst_a', 'dst_b', 'dst_c']);
  });

  it('applies a change that failed on the broker again after the wait, until it succeeds', async () => {
    const { timers, applied, warnings, refreshes } = refreshesFailing([new BrokerUnavailableError('no leader'), new BrokerUnavailableError('no leader')]);
    refreshes.push(deleted('dst_a'));
    await settle();
    timers.advance(999);
    await settle();
    expect(applied).to.deep.equal(['dst_a']);
    timers.advance(1);
    await settle();
    timers.advance(1000);
    await settle();
    expect(applied).to.deep.equal(['dst_a', 'dst_a', 'dst_a']);
    expect(warnings).to.deep.equal(['deliverer refresh failed; applied again later', 'deliverer refresh failed; applied again later']);
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
