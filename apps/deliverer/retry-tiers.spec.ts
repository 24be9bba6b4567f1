import { expect } from 'chai';
import { RETRY_TIERS, tierFor } from '../../libs/delivery/retry-schedule.js';
import { moveAt } from './retry-tiers.js';

const [oneSecond, fiveSeconds, thirtySeconds] = RETRY_TIERS;

describe('moveAt', function () {
  it('in the shortest tier, moves a job at its due time when that comes before the tier delay', function () {
    expect(moveAt(oneSecond!, 10_000, 10_300)).to.equal(10_300);
  });

  it('in the shortest tier, moves a job with more time left after the tier delay, to wait again', function () {
    expect(moveAt(oneSecond!, 10_000, 14_000)).to.equal(11_000);
  });

  it('in a longer tier, moves a job after the tier delay since it was appended', function () {
    expect(moveAt(thirtySeconds!, 10_000, 10_000 + 100_000)).to.equal(40_000);
  });

  it('in a longer tier, moves a job as soon as less than the tier delay is left, into the shorter tier that fits', function () {
    const appendedAt = 10_000;
    const dueAt = appendedAt + 8_000;
    const at = moveAt(fiveSeconds!, appendedAt, dueAt);
    expect(at).to.equal(dueAt - 5_000 + 1);
    expect(tierFor(dueAt - at)).to.equal(oneSecond);
    expect(tierFor(dueAt - (at - 1))).to.equal(fiveSeconds);
  });

  it('moves a job already past its time at once', function () {
    expect(moveAt(thirtySeconds!, 10_000, 12_000)).to.be.below(10_000);
  });
});
