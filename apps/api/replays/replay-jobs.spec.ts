import { expect } from 'chai';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createDestination, createSource, orgIds, seedEvent } from '../../../testing/event-fixtures.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { isDefined, waitFor } from '../../../libs/testing/wait-for.js';
import { replayStepSize } from './replay-runner.js';

describeEachStore('Replay jobs', (target) => {
  let h: ApiHarness;
  let sourceId: string;
  let one: { id: string; name: string };
  let two: { id: string; name: string };
  /** Ids of the seeded events that have a delivery to each destination. */
  const toOne: string[] = [];
  const toTwo: string[] = [];

  before(async function () {
    h = await startApiHarness(this, target);
    const org = await orgIds(h);
    sourceId = (await createSource(h, { name: 'Replayed', slug: 'replayed' })).id;
    one = await createDestination(h, { name: 'One', url: 'https://one.example.com/hook' });
    two = await createDestination(h, { name: 'Two', url: 'https://two.example.com/hook' });
    const routedTo = (d: { id: string; name: string }) => ({ destinationId: d.id, destinationName: d.name });
    for (const destinations of [[one], [one], [one, two], [one, two], [two]]) {
      const event = await seedEvent(h, { orgId: org.a, sourceId, targets: destinations.map(routedTo) });
      if (destinations.includes(one)) toOne.push(event.eventId);
      if (destinations.includes(two)) toTwo.push(event.eventId);
    }
  });

  after(async () => {
    await h?.stop();
  });

  const finished = (id: string) =>
    waitFor(`replay ${id} to finish`, async () => {
      const job = (await h.api('GET', `/api/replays/${id}`)).body;
      return job.status === 'running' ? undefined : job;
    }, isDefined);

  it("a dry run counts only the events with a delivery to filter.destinationId, as the job then replays", async () => {
    const dryRun = await h.api('POST', '/api/replays', { body: { filter: { destinationId: two.id }, dryRun: true } });
    expect(dryRun.status, dryRun.text).to.equal(200);
    expect(dryRun.body.matched).to.equal(toTwo.length);
    expect(dryRun.body.sample).to.have.members(toTwo);
    const withSource = await h.api('POST', '/api/replays', { body: { filter: { sourceId, destinationId: one.id }, dryRun: true } });
    expect(withSource.body.matched).to.equal(toOne.length);
    const created = await h.api('POST', '/api/replays', { body: { filter: { destinationId: two.id }, destinationIds: [two.id], maxPerSecond: 100 } });
    expect(created.status, created.text).to.equal(202);
    expect(created.body).to.include({ matched: toTwo.length, error: null });
    expect(await finished(created.body.id)).to.include({ status: 'completed', matched: toTwo.length, replayed: toTwo.length, error: null });
  });

  it('a job that fails says why in its error', async () => {
    const victim = await createDestination(h, { name: 'Short-lived', url: 'https://short.example.com/hook' });
    const created = await h.api('POST', '/api/replays', { body: { filter: { destinationId: one.id }, destinationIds: [victim.id], maxPerSecond: 1 } });
    expect(created.body).to.include({ status: 'running', error: null });
    // One event a second: the job cannot finish the five before its destination goes.
    expect((await h.api('DELETE', `/api/destinations/${victim.id}`)).status).to.equal(204);
    const job = await finished(created.body.id);
    expect(job.status).to.equal('failed');
    expect(job.error).to.be.a('string').and.include(victim.id);
    expect((await h.api('GET', '/api/replays')).body.data.find((listed: { id: string }) => listed.id === job.id)).to.deep.equal(job);
  });
});

describe('replayStepSize', () => {
  it('keeps a step of a job within the 10,000 deliveries of one bulk replay, whatever RELAY_MAX_ROUTES_PER_SOURCE is', () => {
    expect([1, 100, 101, 1000, 10_000].map(replayStepSize)).to.deep.equal([100, 100, 99, 10, 1]);
  });
});
