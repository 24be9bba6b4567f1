import { expect } from 'chai';
import { describeEachBackend } from '../../libs/testing/backend-targets.js';
import { respond, type RecordedRequest } from '../../libs/testing/http-sink.js';
import { useRelayHarness } from '../../testing/relay-harness.js';
import { isDefined, isTrue, waitFor } from '../../libs/testing/wait-for.js';

describeEachBackend('ordered delivery per source (ordering: "source")', (target) => {
  // On Kafka a new destination's topic joins the deliverer's subscription through a group rebalance.
  const settleMs = target.name.includes('Kafka') ? 40_000 : 10_000;
  const suite = useRelayHarness(target);
  const api = (...args: Parameters<typeof suite.harness.api>) => suite.harness.api(...args);

  beforeEach(function () {
    this.currentTest?.timeout(settleMs * 5);
  });

  let count = 0;
  async function orderedDestination(url: string, sourceCount: number, retryPolicy: Record<string, number> = { maxRetries: 5, initialDelay: 500, backoffMultiplier: 1 }) {
    count += 1;
    const destination = await api('POST', '/api/destinations', { body: { name: `Ordered ${count}`, url, ordering: 'source', retryPolicy } });
    expect(destination.status, destination.text).to.equal(201);
    expect(destination.body.ordering).to.equal('source');
    const slugs: string[] = [];
    for (let n = 0; n < sourceCount; n += 1) {
      const source = await api('POST', '/api/sources', { body: { name: `Ordered ${count}-${n}`, slug: `ordered-${count}-${n}` } });
      await api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } });
      slugs.push(source.body.slug);
    }
    return { destinationId: destination.body.id as string, slug: slugs[0]!, slugs };
  }

  async function ingest(slug: string, n: number) {
    const response = await suite.harness.send(`/ingest/default/${slug}`, `{"source":"${slug}","n":${n}}`);
    expect(response.status, response.text).to.equal(200);
  }

  /** Deliveries of the destination not yet delivered or finally failed. */
  async function unsettled(destinationId: string): Promise<number> {
    const [row] = await suite.harness.relay.store.sql.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM deliveries WHERE destination_id = ? AND status IN ('pending', 'retrying')`, [
      destinationId,
    ]);
    return Number(row!.n);
  }

  const sequence = (requests: readonly RecordedRequest[], slug: string) =>
    requests.map((request) => JSON.parse(request.body.toString()) as { source: string; n: number }).filter((body) => body.source === slug).map((body) => body.n);

  it('sends the next event of a source only once the previous one is delivered, retries included, without holding another source', async () => {
    // The first request fails twice (retried after 500 ms each time; 1.5 s on Kafka, where each of the
    // other source's three deliveries crosses the topic again behind its predecessor and waits a fetch);
    // every other answer is 200.
    let failures = 0;
    const receiver = await suite.sink((request) => {
      const body = JSON.parse(request.body.toString()) as { source: string; n: number };
      if (body.n === 0 && body.source.endsWith('-0') && failures < 2) {
        failures += 1;
        return respond(500);
      }
      return respond(200);
    });
    const retryDelay = target.name.includes('Kafka') ? 1500 : 500;
    const { slugs } = await orderedDestination(receiver.url, 2, { maxRetries: 5, initialDelay: retryDelay, backoffMultiplier: 1 });
    for (let n = 0; n < 5; n += 1) await ingest(slugs[0]!, n);
    for (let n = 0; n < 3; n += 1) await ingest(slugs[1]!, n);
    await receiver.waitForRequests(10, settleMs * 2);
    expect(sequence(receiver.requests, slugs[0]!)).to.deep.equal([0, 0, 0, 1, 2, 3, 4]);
    expect(sequence(receiver.requests, slugs[1]!)).to.deep.equal([0, 1, 2]);
    // The other source was not held behind the first one's retries.
    const lastOfOther = receiver.requests.findIndex((request) => request.body.toString() === `{"source":"${slugs[1]}","n":2}`);
    // Its third request, after the two failures: the other source's first ones may come before them (in CI on Kafka they did).
    const firstSuccess = receiver.requests.flatMap((request, index) => (request.body.toString() === `{"source":"${slugs[0]}","n":0}` ? [index] : []))[2]!;
    expect(lastOfOther, 'the other source finished before the first one got through').to.be.below(firstSuccess);
  });

  it('a finally failed event lets the next one go, and the line survives a restart of the relay', async () => {
    const receiver = await suite.sink((request) => (request.body.toString().includes('"n":0') ? respond(500) : respond(200)));
    const line = await orderedDestination(receiver.url, 1, { maxRetries: 2, initialDelay: 700, backoffMultiplier: 1 });
    for (let n = 0; n < 4; n += 1) await ingest(line.slug, n);
    await receiver.waitForRequests(1, settleMs);
    // Restarted while the head waits for its retry and the others wait behind it.
    await suite.harness.restart();
    // Every attempt of the line is recorded once settled, so every request it makes has arrived by then.
    await waitFor('every delivery to settle', async () => (await unsettled(line.destinationId)) === 0, isTrue, settleMs * 2);
    // Three attempts of the head (a restart may send the one in flight again), then the others in order.
    const sent = sequence(receiver.requests, line.slug);
    expect(sent.filter((n, index) => index === 0 || n !== sent[index - 1])).to.deep.equal([0, 1, 2, 3]);
    expect(sent.filter((n) => n === 0).length).to.be.at.least(3);
  });
  async function waitingInLines(destinationId: string): Promise<number> {
    const [row] = await suite.harness.relay.store.sql.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM ordered_waiting WHERE destination_id = ?', [destinationId]);
    return Number(row!.n);
  }

  it('switching to ordering "none" sends the jobs waiting behind a failing head at once, each once, and the head on its next retry', async () => {
    // The head fails until the switch; its retry comes long after the switch, the released jobs long before.
    let switched = false;
    const receiver = await suite.sink((request) => (!switched && request.body.toString().includes('"n":0') ? respond(500) : respond(200)));
    const line = await orderedDestination(receiver.url, 1, { maxRetries: 3, initialDelay: settleMs * 1.5, maxDelay: settleMs * 1.5, backoffMultiplier: 1 });
    for (let n = 0; n < 5; n += 1) await ingest(line.slug, n);
    await waitFor('four jobs waiting behind the head', async () => ((await waitingInLines(line.destinationId)) === 4 ? true : undefined), isDefined, settleMs);
    expect(sequence(receiver.requests, line.slug)).to.deep.equal([0]);

    switched = true;
    const patched = await api('PATCH', `/api/destinations/${line.destinationId}`, { body: { ordering: 'none' } });
    expect(patched.status, patched.text).to.equal(200);
    await receiver.waitForRequests(5, settleMs);
    // Released in line order, without waiting for the head's retry.
    expect(sequence(receiver.requests, line.slug)).to.deep.equal([0, 1, 2, 3, 4]);
    expect(await waitingInLines(line.destinationId)).to.equal(0);
    const [lines] = await suite.harness.relay.store.sql.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM ordered_heads WHERE destination_id = ?', [line.destinationId]);
    expect(Number(lines!.n)).to.equal(0);

    // The head's retry, the last request of the line, is recorded once every delivery has settled.
    await waitFor('every delivery to settle', async () => (await unsettled(line.destinationId)) === 0, isTrue, settleMs * 2);
    expect(sequence(receiver.requests, line.slug)).to.deep.equal([0, 1, 2, 3, 4, 0]);
  });

  it('deleting an ordered destination fails the jobs waiting behind its head at once', async () => {
    const receiver = await suite.sink(() => respond(500));
    const line = await orderedDestination(receiver.url, 1, { maxRetries: 3, initialDelay: settleMs * 3, maxDelay: settleMs * 3, backoffMultiplier: 1 });
    for (let n = 0; n < 3; n += 1) await ingest(line.slug, n);
    /** The destination's deliveries by status, and its jobs waiting behind their heads. */
    const counts = async () => {
      const rows = await suite.harness.relay.store.sql.all<{ status: string; n: number | string }>(`SELECT status, COUNT(*) AS n FROM deliveries WHERE destination_id = ? GROUP BY status`, [
        line.destinationId,
      ]);
      const byStatus: Record<string, number> = Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
      return { ...byStatus, all: rows.reduce((sum, row) => sum + Number(row.n), 0), waiting: await waitingInLines(line.destinationId) } as Record<string, number | undefined>;
    };
    // Every delivery but the head's waits behind it. A sender's post again after a 503 whose write landed
    // anyway (a loaded machine's brokers) is a fourth event, and waits too.
    await waitFor('the jobs behind the head waiting', counts, (now) => now.waiting! >= 2 && now.waiting === now.all! - 1, settleMs);

    expect((await api('DELETE', `/api/destinations/${line.destinationId}`)).status).to.equal(204);
    // The waiting jobs fail now (destination_deleted); the head fails when its retry comes, long after.
    await waitFor('the waiting jobs to fail, and only they', counts, (now) => now.waiting === 0 && now.retrying === 1 && now.failed === now.all! - 1, settleMs);
    expect(receiver.requests).to.have.length(1);
  });
});
