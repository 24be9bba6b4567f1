import { expect } from 'chai';
import { createHostileRequests, type FuzzTargets } from './hostile-requests.js';
import { seededRandom } from './seeded-random.js';

const TARGETS: FuzzTargets = {
  endpoints: [
    { method: 'GET', path: '/api/sources/:id' },
    { method: 'PATCH', path: '/api/sources/:id' },
    { method: 'DELETE', path: '/api/sources/:id' },
    { method: 'POST', path: '/ingest/:org/:source' },
  ],
  ids: { src: ['src_kept', 'src_other'] },
  keep: new Set(['src_kept']),
  foreignIds: ['src_theirs'],
  ingestTargets: [['org-a', 'open']],
  apiKey: 'rk_test',
};

const run = (seed: number, count: number) => {
  const next = createHostileRequests(seededRandom(seed), TARGETS);
  return Array.from({ length: count }, (_, index) => next(index));
};

describe('createHostileRequests', () => {
  it('generates the same requests from the same seed', () => {
    expect(run(17, 200)).to.deep.equal(run(17, 200));
    expect(run(17, 50)).not.to.deep.equal(run(18, 50));
  });

  it('aims at every endpoint, fills every path parameter, and never DELETEs a kept id', () => {
    const requests = run(3, 2000);
    expect(new Set(requests.map((r) => `${r.endpoint.method} ${r.endpoint.path}`)).size).to.equal(TARGETS.endpoints.length);
    expect(requests.every((r) => !r.path.includes('/:'))).to.equal(true);
    expect(requests.filter((r) => r.method === 'DELETE' && r.path.includes('src_kept'))).to.deep.equal([]);
    expect(requests.some((r) => r.method === 'GET' && r.path.includes('src_kept'))).to.equal(true);
  });
});
