import { expect } from 'chai';
import { describeEachBackend } from '../../libs/testing/backend-targets.js';
import { respond } from '../../libs/testing/http-sink.js';
import { useRelayHarness } from '../../testing/relay-harness.js';
import { DELIVERER_GROUP, destinationTopic, LANES_GROUP, LANES_TOPIC } from '../../libs/pipeline/topology.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';

describeEachBackend('a destination that answers 410 Gone', (target) => {
  // On Kafka a new destination's topic joins the deliverer's subscription through a group rebalance.
  const settleMs = target.name.includes('Kafka') ? 40_000 : 10_000;
  const suite = useRelayHarness(target);

  beforeEach(function () {
    this.currentTest?.timeout(settleMs * 4);
  });

  async function ingest(slug: string, body: string) {
    const response = await suite.harness.send(`/ingest/default/${slug}`, body);
    expect(response.status, response.text).to.equal(200);
    return response.body.eventId as string;
  }

  const deliveryOf = async (eventId: string) =>
    (await suite.harness.relay.store.sql.all<{ status: string; attempt_count: number }>('SELECT status, attempt_count FROM deliveries WHERE event_id = ?', [eventId]))[0];

  it('fails the delivery without retries, disables the destination as gone, holds its later jobs, and delivers them once enabled again', async () => {
    const receiver = await suite.sink([respond(410, { body: 'unsubscribed' })]);
    const { api } = suite.harness;
    const source = await api('POST', '/api/sources', { body: { name: 'Gone source', slug: 'gone-source' } });
    const destination = await api('POST', '/api/destinations', {
      body: { name: 'Gone receiver', url: receiver.url, retryPolicy: { maxRetries: 5, initialDelay: 100 } },
    });
    expect((await api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } })).status).to.equal(201);

    const first = await ingest('gone-source', '{"n":1}');
    await receiver.waitForRequests(1, settleMs);
    const disabled = await waitFor('the destination to be disabled', async () => {
      const view = await api('GET', `/api/destinations/${destination.body.id}`);
      return view.body.enabled === false ? view.body : undefined;
    }, isDefined, settleMs);
    expect(disabled.disabledReason).to.equal('gone');
    expect(Date.parse(disabled.disabledAt)).to.be.a('number').and.not.NaN;
    expect(await waitFor('the first delivery to fail', async () => ((await deliveryOf(first))?.status === 'failed' ? deliveryOf(first) : undefined), isDefined, settleMs)).to.deep.include({
      attempt_count: 1,
    });

    // Held, not failed: the second job reaches the deliverer (in its topic; on Kafka taken off the lanes
    // and parked in its topic) and is not sent or committed while it is disabled.
    const second = await ingest('gone-source', '{"n":2}');
    const admin = suite.harness.relay.broker.admin();
    const topic = destinationTopic(destination.body.id);
    // The counts read are kept, so that a failure says which of the two it waited for.
    await waitFor('the second job to reach the deliverer', async () => ({
      heldInTopic: (await admin.lag(DELIVERER_GROUP, [topic])).reduce((sum, partition) => sum + partition.lag, 0),
      lanesLag: (await admin.lag(LANES_GROUP, [LANES_TOPIC])).reduce((sum, partition) => sum + partition.lag, 0),
    }), ({ heldInTopic, lanesLag }) => heldInTopic === 1 && lanesLag === 0, settleMs);
    expect(receiver.requests).to.have.length(1);
    expect((await deliveryOf(second))?.status).to.equal('pending');
    expect((await admin.lag(DELIVERER_GROUP, [topic])).reduce((sum, partition) => sum + partition.lag, 0), 'jobs held in its topic').to.be.at.least(1);

    receiver.setBehaviour([respond(200)]);
    const enabling = Date.now();
    const enabled = await api('PATCH', `/api/destinations/${destination.body.id}`, { body: { enabled: true } });
    expect(enabled.body).to.include({ enabled: true, disabledReason: null, disabledAt: null });
    const requests = await receiver.waitForRequests(2, settleMs);
    expect(requests[1]!.body.toString()).to.equal('{"n":2}');
    // Its one attempt, sent after the enabling: it was never sent (nor failed) while disabled.
    expect(requests[1]!.receivedAt).to.be.at.least(enabling);
    expect(await waitFor('the held job to be delivered', async () => ((await deliveryOf(second))?.status === 'delivered' ? deliveryOf(second) : undefined), isDefined, settleMs)).to.deep.include({
      attempt_count: 1,
    });
    expect(receiver.requests).to.have.length(2);

    const exposition = await (await fetch(`${suite.harness.relay.metricsUrl}/metrics`)).text();
    expect(exposition).to.include(`relay_destinations_gone_total{destination="${destination.body.id}"} 1`);
    expect(exposition).to.match(/relay_dead_letters_total\{reason="destination_gone"\} 1/);
  });
});
