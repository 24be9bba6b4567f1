import { expect } from 'chai';
import { decodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { respond, startHttpSink } from '../../libs/testing/http-sink.js';
import { DESTINATION_DELETED } from './attempt-reporter.js';
import { DEAD_REASON_HEADER } from '../../libs/pipeline/dead-letter.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';
import { eachTestDelivererAndSink } from '../../testing/deliverer-harness.js';
import { DELIVERER_GROUP, destinationTopic } from '../../libs/pipeline/topology.js';

describe('deliverer: configuration changes', function () {
  const t = eachTestDelivererAndSink();

  it('delivers to a destination created after start once its creation is announced', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    await t.h.announce({ kind: 'destination', action: 'created', orgId: t.h.orgId, id: destination.id });
    const job = await t.h.publishJob(destination.id, Buffer.from('{"new":true}'));

    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
    expect(attempt).to.include({ destinationId: destination.id, deliveryStatus: 'delivered' });
  });

  it('uses the changed destination settings after an update, in spite of its cache', async function () {
    const moved = await startHttpSink();
    try {
      const destination = await t.h.addDestination({ url: t.sink.url });
      const first = await t.h.publishJob(destination.id, Buffer.from('{}'));
      await t.h.attemptsOf(first.deliveryId, 1);

      await t.h.store.destinations.update(t.h.orgId, destination.id, { url: `${moved.url}/v2` });
      await t.h.deliverer.refresh({ kind: 'destination', action: 'updated', orgId: t.h.orgId, id: destination.id });
      const second = await t.h.publishJob(destination.id, Buffer.from('{}'));
      await t.h.attemptsOf(second.deliveryId, 1);

      expect(t.sink.requests).to.have.length(1);
      expect(moved.requests.map((request) => request.url)).to.deep.equal(['/v2']);
    } finally {
      await moved.close();
    }
  });

  it('closes an open circuit when the destination is updated, so the fix is tried at once', async function () {
    const fixed = await startHttpSink();
    try {
      t.sink.setBehaviour([respond(500)]);
      const destination = await t.h.addDestination({
        url: t.sink.url,
        retryPolicy: { maxRetries: 0, initialDelay: 100, maxDelay: 1000, backoffMultiplier: 2 },
      });
      for (let n = 1; n <= 5; n += 1) await t.h.publishJob(destination.id, Buffer.from('{}'));
      await t.h.attempts.waitFor(5, (attempt) => attempt.destinationId === destination.id);
      expect(t.h.deliverer.circuitState(destination.id)).to.equal('open');

      await t.h.store.destinations.update(t.h.orgId, destination.id, { url: fixed.url });
      await t.h.deliverer.refresh({ kind: 'destination', action: 'updated', orgId: t.h.orgId, id: destination.id });
      expect(t.h.deliverer.circuitState(destination.id)).to.equal('closed');
      const job = await t.h.publishJob(destination.id, Buffer.from('{}'));
      // The default reset timeout is 30 s: only the update can let this through in time.
      const [attempt] = await t.h.attemptsOf(job.deliveryId, 1, 2000);
      expect(attempt).to.include({ attemptNumber: 1, deliveryStatus: 'delivered' });
    } finally {
      await fixed.close();
    }
  });

  it('holds the jobs of a disabled destination without attempting them, and delivers them as first attempts once it is enabled again', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url, enabled: false });
    const jobs = [await t.h.publishJob(destination.id, Buffer.from('{"n":1}')), await t.h.publishJob(destination.id, Buffer.from('{"n":2}'))];
    // Paused only once the first job was fetched and found its destination disabled: nothing of the topic is sent while paused.
    await waitFor('the disabled destination held', () => t.h.paused(destinationTopic(destination.id)), isTrue, 5000, 10);
    const lag = await t.h.broker.admin().lag(DELIVERER_GROUP, [destinationTopic(destination.id)]);
    expect(lag.reduce((sum, partition) => sum + partition.lag, 0), 'both jobs kept, uncommitted').to.equal(2);
    expect(t.sink.requests).to.have.length(0);
    expect(t.h.attempts.items.filter((attempt) => attempt.destinationId === destination.id)).to.have.length(0);

    await t.h.store.destinations.update(t.h.orgId, destination.id, { enabled: true });
    await t.h.announce({ kind: 'destination', action: 'updated', orgId: t.h.orgId, id: destination.id });
    for (const job of jobs) {
      const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
      expect(attempt).to.include({ attemptNumber: 1, deliveryStatus: 'delivered' });
    }
    expect(t.sink.requests.map((request) => request.body.toString())).to.deep.equal(['{"n":1}', '{"n":2}']);
  });

  it('fails the jobs of a deleted destination without sending them: a failed attempt record and a dead letter each', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    const first = await t.h.publishJob(destination.id, Buffer.from('{}'));
    await t.h.attemptsOf(first.deliveryId, 1);

    await t.h.store.destinations.delete(t.h.orgId, destination.id);
    await t.h.deliverer.refresh({ kind: 'destination', action: 'deleted', orgId: t.h.orgId, id: destination.id });
    const orphan = await t.h.publishJob(destination.id, Buffer.from('{"orphan":true}'));

    const [attempt] = await t.h.attemptsOf(orphan.deliveryId, 1);
    expect(attempt).to.include({ ok: false, statusCode: null, errorKind: DESTINATION_DELETED, deliveryStatus: 'failed', nextAttemptAt: null });
    const [dead] = await t.h.dead.waitFor(1);
    expect(decodeDeliveryJob(dead!).job.deliveryId).to.equal(orphan.deliveryId);
    expect(dead!.headers[DEAD_REASON_HEADER]).to.equal('destination_deleted');
    expect(t.sink.requests).to.have.length(1);
  });
  it("takes on a circuit another deliverer opened, and delivers the destination's jobs once it hears it closed", async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    await t.h.announce({ kind: 'circuit', destinationId: destination.id, state: 'open' });
    await waitFor('the announced open circuit to be taken on', async () => t.h.deliverer.circuitState(destination.id), (state) => state === 'open', 5_000, 10);
    const job = await t.h.publishJob(destination.id, Buffer.from('{"held":true}'));

    await t.h.announce({ kind: 'circuit', destinationId: destination.id, state: 'closed' });
    // The default reset timeout is 30 s: only the announced close can let the job through in time.
    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1, 5_000);
    expect(attempt).to.include({ attemptNumber: 1, deliveryStatus: 'delivered' });
    expect(t.h.deliverer.circuitState(destination.id)).to.equal('closed');
  });
});
