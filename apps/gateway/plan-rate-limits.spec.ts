import { expect } from 'chai';
import type { Plan } from '../../libs/config/config.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { expectRefused, startIngestHarness, type IngestHarness } from '../../testing/ingest-harness.js';

/** SPEC 8, written out here rather than read from the code under test. */
const REQUESTS_PER_SECOND: [Plan, number][] = [
  ['starter', 100],
  ['pro', 500],
  ['business', 2000],
];
const OVER = 5;
const SECOND_MS = 1000;

describeEachStore('Ingest rate limits of the paid plans', (target) => {
  let h: IngestHarness;
  // The gateway's clock stands still inside one second, so a burst falls in one window however long it takes to send.
  let clock = Math.floor(Date.now() / SECOND_MS) * SECOND_MS + 100;

  before(async function () {
    h = await startIngestHarness(this, target, { gatewayClock: () => clock });
  });

  after(async () => {
    await h?.stop();
  });

  for (const [plan, limit] of REQUESTS_PER_SECOND) {
    it(`on plan ${plan}, accepts ${limit} requests in one second per source, answers 429 RATE_LIMITED beyond, and accepts again in the next second`, async function () {
      this.timeout(120_000);
      const org = `org-rate-${plan}`;
      const source = await h.createUniqueSource({}, await h.createOrganization(org, plan), org);
      clock += SECOND_MS;
      const before = await h.publishedCount();
      const answers = [];
      // In waves, so the burst measures the limit and not the machine's connection backlog.
      for (let sent = 0; sent < limit + OVER; sent += 100) {
        const wave = Math.min(100, limit + OVER - sent);
        answers.push(...(await Promise.all(Array.from({ length: wave }, (_, n) => h.ingest(source.path, { body: { n: sent + n, plan } })))));
      }
      // What else came back, should any answer be neither: the failure then names it.
      const statuses: Record<string, number> = {};
      for (const { status, body } of answers) {
        const answer = `${status} ${body?.code ?? ''}`;
        statuses[answer] = (statuses[answer] ?? 0) + 1;
      }
      expect(answers.filter((answer) => answer.status === 200), JSON.stringify(statuses)).to.have.length(limit);
      const limited = answers.filter((answer) => answer.status === 429);
      expect(limited).to.have.length(OVER);
      for (const answer of limited) expectRefused(answer, 429, 'RATE_LIMITED');
      expect(await h.publishedCount()).to.equal(before + limit);

      clock += SECOND_MS;
      expect((await h.ingest(source.path, { body: { n: 'next second', plan } })).status).to.equal(200);
    });
  }
});
