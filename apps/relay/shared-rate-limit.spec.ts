import { expect } from 'chai';
import { partitionFor } from '../../libs/broker/partitioner.js';
import { busiestSpan } from '../../libs/stats/busiest-span.js';
import { apiClient } from '../../testing/api-client.js';
import { BACKEND_TARGETS } from '../../libs/testing/backend-targets.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import { sampleSum } from '../../libs/testing/metric-samples.js';
import { API_KEY, useRelayProcesses } from '../../testing/pipeline-fixture.js';
import type { RelayProcess } from '../../libs/testing/relay-child-process.js';

const kafkaPostgres = BACKEND_TARGETS.find((target) => target.name.includes('Kafka'))!;
/** The destination's limit; 1 a second, so a minute of it is measured in a minute. */
const RATE_PER_MINUTE = 60;
/** More than two minutes' worth at the limit: the backlog outlasts the measured minute. */
const WEBHOOKS = 160;
/** The span measured from the first delivery: a minute and a rate window more. */
const MEASURED_MS = 66_000;
/** A destination topic's partitions (the relay's default). */
const PARTITIONS = 4;

describe(`a destination's rate limit across two deliverer processes [${kafkaPostgres.name}]`, function () {
  this.timeout(240_000);
  // The `all` process first: it applies the migrations the second deliverer then finds done.
  const suite = useRelayProcesses(kafkaPostgres, {}, async ({ start }) => {
    await start('all');
    await start('deliverer');
  });

  it(`sends no more than ${RATE_PER_MINUTE}/min + 10% in any minute, both deliverers sending`, async function () {
    const { sink } = suite;
    const [all, deliverer] = suite.processes as [RelayProcess, RelayProcess];
    const call = apiClient(all.url, API_KEY);
    const destination = await call('POST', '/api/destinations', { body: { name: 'Limited', url: `${sink.url}/hooks`, rateLimitPerMinute: RATE_PER_MINUTE } });
    expect(destination.status, destination.text).to.equal(201);
    const destinationId = destination.body.id as string;
    // Its jobs go through the lanes to one deliverer and, past its rate budget, are parked in its own
    // topic, whose partitions the two deliverers share: the case a per-process limit would let through twice.
    // Sources whose keys cover every partition of the destination's topic, so both deliverers have work.
    const ingestPaths: string[] = [];
    const covered = new Set<number>();
    for (let n = 0; covered.size < PARTITIONS || ingestPaths.length < PARTITIONS; n += 1) {
      const source = await call('POST', '/api/sources', { body: { name: `Shop ${n}`, slug: `shop-${n}`, provider: 'generic' } });
      expect(source.status, source.text).to.equal(201);
      const partition = partitionFor(source.body.id as string, PARTITIONS);
      if (covered.has(partition)) continue;
      covered.add(partition);
      expect((await call('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId } })).status).to.equal(201);
      ingestPaths.push(new URL(source.body.webhookUrl).pathname);
    }
    for (let n = 0; n < WEBHOOKS; n += 1) {
      const response = await fetch(`${all.url}${ingestPaths[n % ingestPaths.length]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
      expect(response.status).to.equal(200);
      await response.arrayBuffer();
    }
    await sink.waitForRequests(1, 60_000);
    const firstAt = sink.requests[0]!.receivedAt;
    // A minute and a window more, measured from the first delivery: the signal is a request after it
    // (the backlog outlasts it at the limit), or every webhook delivered before it (a broken limit).
    await waitFor(
      `a request ${MEASURED_MS} ms after the first, or all ${WEBHOOKS} delivered`,
      async () => sink.requests.length,
      (count) => count >= WEBHOOKS || sink.requests[count - 1]!.receivedAt - firstAt >= MEASURED_MS,
      MEASURED_MS + 60_000,
    );
    const times = sink.requests.map((request) => request.receivedAt).filter((at) => at - firstAt < MEASURED_MS);
    const attemptsOf = async (member: RelayProcess) =>
      sampleSum(await member.metrics(), 'relay_delivery_attempts_total', { destination: destinationId });
    const [byAll, byDeliverer] = [await attemptsOf(all), await attemptsOf(deliverer)];
    console.log(`      ${times.length} requests in ${Math.round((Math.max(...times) - firstAt) / 1000)} s, busiest minute ${busiestSpan(times, 60_000)}; attempts by process: ${byAll} and ${byDeliverer}`);

    expect(busiestSpan(times, 60_000), 'requests in the busiest minute').to.be.at.most(Math.floor(RATE_PER_MINUTE * 1.1));
    // It delivers at about the limit (rebalances aside), and from both processes.
    expect(times.length).to.be.at.least(RATE_PER_MINUTE / 2);
    await waitFor('both deliverers to have sent', async () => [await attemptsOf(all), await attemptsOf(deliverer)], ([a, b]) => a! > 0 && b! > 0, 10_000);
  });
});
