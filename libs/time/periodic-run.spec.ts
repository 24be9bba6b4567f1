import { expect } from 'chai';
import { ManualTimers } from '../testing/manual-timers.js';
import { periodicRun } from './periodic-run.js';

/** Lets the run's promise chain settle (its catch and finally) before the test looks. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('periodicRun', () => {
  it('runs first after the start delay, then each interval after the previous run ends, never two at once', async () => {
    const timers = new ManualTimers();
    let finish: (() => void) | undefined;
    let runs = 0;
    const periodic = periodicRun({ run: () => new Promise<void>((resolve) => ((runs += 1), (finish = resolve))), intervalMs: 100, onError: () => undefined, schedule: timers.schedule });
    periodic.start(10);
    timers.advance(9);
    expect(runs).to.equal(0);
    timers.advance(1);
    expect(runs).to.equal(1);
    timers.advance(1_000);
    expect(runs, 'the first run has not ended').to.equal(1);
    finish!();
    await settled();
    timers.advance(99);
    expect(runs).to.equal(1);
    timers.advance(1);
    expect(runs).to.equal(2);
  });

  it('hands a failed run to onError and runs again at the next interval', async () => {
    const timers = new ManualTimers();
    const errors: unknown[] = [];
    let runs = 0;
    const periodic = periodicRun({ run: async () => ((runs += 1), Promise.reject(new Error('store down'))), intervalMs: 50, onError: (error) => errors.push(error), schedule: timers.schedule });
    periodic.start(0);
    timers.advance(0);
    await settled();
    expect(errors.map((error) => (error as Error).message)).to.deep.equal(['store down']);
    timers.advance(50);
    expect(runs).to.equal(2);
  });

  it('stops scheduling at stop, says it is stopping, and waits for the run in progress', async () => {
    const timers = new ManualTimers();
    let finish: (() => void) | undefined;
    const periodic = periodicRun({ run: () => new Promise<void>((resolve) => (finish = resolve)), intervalMs: 10, onError: () => undefined, schedule: timers.schedule });
    periodic.start(0);
    timers.advance(0);
    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    expect(periodic.stopping()).to.equal(true);
    await settled();
    expect(stopped, 'a run is in progress').to.equal(false);
    finish!();
    await stopping;
    expect(timers.pendingCount).to.equal(0);
  });
});
