import { expect } from 'chai';
import { machineBusyMeter } from './machine-busy.js';

/** Two cores whose times (ms) the test moves on by hand. */
function twoCores() {
  const cores = [0, 1].map(() => ({ times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }));
  return {
    read: () => cores.map((core) => ({ times: { ...core.times } })),
    spend: (core: number, times: Partial<(typeof cores)[number]['times']>) => {
      for (const [kind, ms] of Object.entries(times)) cores[core]!.times[kind as 'user'] += ms;
    },
  };
}

describe('machineBusyMeter', () => {
  it("reads the share of all cores' time spent busy since the reading before", () => {
    const machine = twoCores();
    const busy = machineBusyMeter(machine.read);
    machine.spend(0, { user: 600, sys: 200, idle: 200 });
    machine.spend(1, { user: 100, idle: 900 });
    expect(busy()).to.be.closeTo(0.45, 1e-9);
    machine.spend(0, { idle: 1000 });
    machine.spend(1, { nice: 500, irq: 500 });
    expect(busy()).to.be.closeTo(0.5, 1e-9);
  });

  it('reads 0 when no time has passed', () => {
    const machine = twoCores();
    const busy = machineBusyMeter(machine.read);
    expect(busy()).to.equal(0);
  });
});
