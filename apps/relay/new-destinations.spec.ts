import { expect } from 'chai';
import { describeEachBackend } from '../../libs/testing/backend-targets.js';
import { respond } from '../../libs/testing/http-sink.js';
import { useRelayHarness } from '../../testing/relay-harness.js';

/** DESIGN: a new destination is usable at once; on Kafka that must not wait for a group rebalance. */
const FIRST_DELIVERY_MS = 5_000;

describeEachBackend('new and re-enabled destinations', (target) => {
  const suite = useRelayHarness(target);

  async function routedDestination(index: number, url: string) {
    const { api } = suite.harness;
    const source = await api('POST', '/api/sources', { body: { name: `New ${index}`, slug: `new-${index}` } });
    expect(source.status, JSON.stringify(source.body)).to.equal(201);
    const destination = await api('POST', '/api/destinations', { body: { name: `Fresh ${index}`, url } });
    expect(destination.status, JSON.stringify(destination.body)).to.equal(201);
    const route = await api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } });
    expect(route.status).to.equal(201);
    return { slug: source.body.slug as string, destinationId: destination.body.id as string };
  }

  let sent = 0;
  /** Ingests a webhook (each body differs, so none is a duplicate); resolves with the time of its 200. */
  async function ingest(slug: string): Promise<number> {
    sent += 1;
    const response = await suite.harness.send(`/ingest/default/${slug}`, `{"n":${sent}}`);
    expect(response.status, response.text).to.equal(200);
    return Date.now();
  }

  /**
   * One delivery before anything is timed: the relay has just started, and on Kafka its consumers join
   * their groups in the background (kafkajs' `run` does not wait for the join). CI once saw the first of
   * ten destinations take 5,448 ms and the other nine 17-27 ms, on a loaded machine whose three JVM
   * brokers took that long to finish the joins. The claim is about a running relay.
   */
  before(async function () {
    this.timeout(60_000);
    const receiver = await suite.sink([respond(200)]);
    const { slug } = await routedDestination(1000, `${receiver.url}/hook`);
    await ingest(slug);
    await receiver.waitForRequests(1, 55_000);
  });

  it('delivers the first webhook of each of 10 destinations created one after another within 5 s', async function () {
    this.timeout(10 * (FIRST_DELIVERY_MS + 5_000));
    const firstDeliveryMs: number[] = [];
    for (let index = 0; index < 10; index += 1) {
      const receiver = await suite.sink([respond(200)]);
      const { slug } = await routedDestination(index, `${receiver.url}/hook`);
      const ingestedAt = await ingest(slug);
      const [request] = await receiver.waitForRequests(1, FIRST_DELIVERY_MS + 5_000);
      firstDeliveryMs.push(request!.receivedAt - ingestedAt);
    }
    expect(firstDeliveryMs.filter((ms) => ms > FIRST_DELIVERY_MS), `first deliveries (ms): ${firstDeliveryMs.join(', ')}`).to.deep.equal([]);
  });

  it('delivers to a re-enabled destination within 5 s, the jobs held while it was disabled included', async function () {
    this.timeout(4 * (FIRST_DELIVERY_MS + 5_000));
    const receiver = await suite.sink([respond(200)]);
    const { slug, destinationId } = await routedDestination(100, `${receiver.url}/hook`);
    await ingest(slug);
    await receiver.waitForRequests(1, FIRST_DELIVERY_MS + 5_000);
    const disabled = await suite.harness.api('PATCH', `/api/destinations/${destinationId}`, { body: { enabled: false } });
    expect(disabled.status).to.equal(200);
    await ingest(slug);
    // Taken before the PATCH: its job may reach the receiver before the PATCH's answer reaches this client
    // (seen on real Kafka, 98 ms before), so the answer's arrival is no bound on it.
    const enabledAt = Date.now();
    const enabled = await suite.harness.api('PATCH', `/api/destinations/${destinationId}`, { body: { enabled: true } });
    expect(enabled.status).to.equal(200);
    const requests = await receiver.waitForRequests(2, FIRST_DELIVERY_MS + 5_000);
    // Held while disabled: it arrives only once the enabling was asked for, and soon after it.
    expect(requests[1]!.receivedAt).to.be.at.least(enabledAt);
    expect(requests[1]!.receivedAt - enabledAt).to.be.at.most(FIRST_DELIVERY_MS);
  });
});
