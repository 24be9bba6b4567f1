import { expect } from 'chai';
import type { Plan } from '../../libs/config/config.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { expectNothingPublished, expectRefused, startIngestHarness, type IngestHarness } from '../../testing/ingest-harness.js';

const MB = 1024 * 1024;
/** SPEC 8, written out here rather than read from the code under test. */
const PAYLOAD_LIMITS: [Plan, number][] = [
  ['starter', 1 * MB],
  ['pro', 5 * MB],
  ['business', 10 * MB],
];

let counter = 0;
/** A body of exactly `size` bytes, unique (no identical-payload duplicate). */
function bodyOfSize(size: number): Buffer {
  const body = Buffer.alloc(size, 'a');
  body.write(`${Date.now()}-${++counter}`);
  return body;
}

const OCTETS = { 'content-type': 'application/octet-stream' };

describeEachStore('Ingest payload limits of the paid plans', (target) => {
  let h: IngestHarness;

  before(async function () {
    h = await startIngestHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  for (const [plan, limit] of PAYLOAD_LIMITS) {
    it(`on plan ${plan}, accepts a body of exactly ${limit / MB} MB and refuses one byte more with 413 PAYLOAD_TOO_LARGE`, async function () {
      this.timeout(60_000);
      const org = `org-${plan}`;
      const source = await h.createUniqueSource({}, await h.createOrganization(org, plan), org);
      const body = bodyOfSize(limit);
      const accepted = await h.ingest(source.path, { rawBody: body, headers: OCTETS });
      expect(accepted.status, accepted.text).to.equal(200);
      const [stored] = await h.events(source.id);
      expect(stored!.payload.equals(body)).to.equal(true);
      const refused = await expectNothingPublished(h, () => h.ingest(source.path, { rawBody: bodyOfSize(limit + 1), headers: OCTETS }));
      expectRefused(refused, 413, 'PAYLOAD_TOO_LARGE');
      expect(refused.body.message).to.include(String(limit));
    });
  }
});
