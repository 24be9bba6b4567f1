import { expect } from 'chai';
import { describeEachBackend } from '../../libs/testing/backend-targets.js';
import { respond, type HttpSink } from '../../libs/testing/http-sink.js';
import { useRelayHarness } from '../../testing/relay-harness.js';
import { isDefined, isTrue, waitFor } from '../../libs/testing/wait-for.js';

describeEachBackend('replay by query', (target) => {
  // On Kafka a new destination's topic joins the deliverer's subscription through a group rebalance.
  const settleMs = target.name.includes('Kafka') ? 40_000 : 10_000;
  // A few ids per chunk, so every job here copies its snapshot over several steps of its runner.
  const suite = useRelayHarness(target, { replaySnapshotChunk: 3 });
  const api = (...args: Parameters<typeof suite.harness.api>) => suite.harness.api(...args);

  beforeEach(function () {
    this.currentTest?.timeout(settleMs * 5);
  });

  let sources = 0;
  /**
   * A source routed to one sink, and `count` events of it, each delivered once. `apart`: each is delivered
   * before the next is sent, so no two share a router batch and its `createdAt` (on Kafka a router that
   * finds the next records already written takes them in the same batch).
   */
  async function deliveredEvents(count: number, body = (n: number) => `{"n":${n}}`, { apart = false } = {}) {
    sources += 1;
    const sink = await suite.sink([respond(200)]);
    const source = await api('POST', '/api/sources', { body: { name: `Replayed ${sources}`, slug: `replayed-${sources}` } });
    const destination = await api('POST', '/api/destinations', { body: { name: `Replayed ${sources}`, url: sink.url } });
    await api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } });
    const eventIds: string[] = [];
    for (let n = 0; n < count; n += 1) {
      const response = await suite.harness.send(`/ingest/default/${source.body.slug}`, body(n));
      expect(response.status, response.text).to.equal(200);
      eventIds.push(response.body.eventId);
      if (apart) await sink.waitForRequests(n + 1, settleMs);
    }
    await sink.waitForRequests(count, settleMs);
    await waitFor('every event to be delivered', async () => {
      const statuses = await Promise.all(eventIds.map(async (id) => (await api('GET', `/api/events/${id}`)).body.status));
      return statuses.every((status) => status === 'delivered') ? true : undefined;
    }, isDefined, settleMs);
    return { sourceId: source.body.id as string, destinationId: destination.body.id as string, sink, eventIds };
  }

  async function deliveryCounts(eventIds: string[]): Promise<number[]> {
    const counts = await Promise.all(
      eventIds.map((id) => suite.harness.relay.store.sql.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM deliveries WHERE event_id = ?', [id])),
    );
    return counts.map(([row]) => Number(row!.n));
  }

  const finished = (id: string, timeoutMs = settleMs) =>
    waitFor(`replay ${id} to finish`, async () => {
      const job = await api('GET', `/api/replays/${id}`);
      return job.body.status === 'running' ? undefined : job.body;
    }, isDefined, timeoutMs);

  /**
   * Waits until the destination has `count` deliveries and each is delivered (its one request recorded),
   * then expects the sink to have seen just those requests.
   */
  async function requestsSettle(sink: HttpSink, destinationId: string, count: number) {
    await waitFor(`${count} deliveries to ${destinationId}, each delivered`, async () => {
      const rows = await suite.harness.relay.store.sql.all<{ status: string }>('SELECT status FROM deliveries WHERE destination_id = ?', [destinationId]);
      return rows.length === count && rows.every((row) => row.status === 'delivered');
    }, isTrue, settleMs);
    expect(sink.requests).to.have.length(count);
  }

  it('a dry run counts the matching events and samples them, and changes nothing', async () => {
    const { sourceId, eventIds } = await deliveredEvents(12, (n) => `{"n":${n},"kind":"${n % 3 === 0 ? 'refund' : 'order'}"}`);
    const response = await api('POST', '/api/replays', { body: { filter: { sourceId, search: 'refund' }, dryRun: true } });
    expect(response.status).to.equal(200);
    expect(response.body.matched).to.equal(4);
    expect(response.body.sample).to.have.members(eventIds.filter((_, n) => n % 3 === 0));
    const all = await api('POST', '/api/replays', { body: { filter: { sourceId }, dryRun: true } });
    expect(all.body.matched).to.equal(12);
    expect(all.body.sample).to.have.length(10);
    expect(await deliveryCounts(eventIds)).to.deep.equal(eventIds.map(() => 1));
    expect((await api('GET', '/api/replays')).body.data.filter((job: { filter: { sourceId?: string } }) => job.filter.sourceId === sourceId)).to.deep.equal([]);
  });

  it('a dry run honours every filter field, destinationId included, and matches what the job then replays', async () => {
    const { destinationId, eventIds } = await deliveredEvents(3);
    // Events of other sources and destinations exist (earlier tests): only this destination's count.
    const filter = { destinationId };
    const dryRun = await api('POST', '/api/replays', { body: { filter, dryRun: true } });
    expect(dryRun.body.matched).to.equal(3);
    expect(dryRun.body.sample).to.have.members(eventIds);
    const created = await api('POST', '/api/replays', { body: { filter, maxPerSecond: 100 } });
    expect(created.body).to.include({ matched: 3 });
    expect(await finished(created.body.id)).to.include({ status: 'completed', matched: 3, replayed: 3, error: null });
  });

  it('a job replays every matching event once, at its pace, and reports its progress', async () => {
    const { sourceId, destinationId, sink, eventIds } = await deliveredEvents(6);
    const created = await api('POST', '/api/replays', { body: { filter: { sourceId }, maxPerSecond: 3 } });
    expect(created.status).to.equal(202);
    expect(created.body).to.include({ status: 'running', matched: 6, maxPerSecond: 3, finishedAt: null, destinationIds: null, error: null });
    expect(created.body.id).to.match(/^rpl_[0-9a-z]{26}$/);
    expect(created.body.filter).to.deep.equal({ sourceId });
    // The events were fixed when the job was created: a later one of the same source is not replayed.
    const later = await suite.harness.send(`/ingest/default/${(await api('GET', `/api/sources/${sourceId}`)).body.slug}`, '{"later":true}');
    const job = await finished(created.body.id);
    expect(job).to.include({ status: 'completed', matched: 6, replayed: 6, skipped: 0 });
    // Three a second: the second three start a second after the first.
    expect(Date.parse(job.finishedAt) - Date.parse(job.createdAt)).to.be.at.least(1000);
    await requestsSettle(sink, destinationId, 13);
    expect(await deliveryCounts([...eventIds, later.body.eventId])).to.deep.equal([...eventIds.map(() => 2), 1]);
    expect((await api('GET', '/api/replays')).body.data[0]).to.deep.equal(job);
  });

  it('replays to the named destinations, with the time range and status of the filter', async () => {
    const { sourceId, eventIds } = await deliveredEvents(3, undefined, { apart: true });
    const other = await suite.sink([respond(200)]);
    const destination = await api('POST', '/api/destinations', { body: { name: 'Named', url: other.url } });
    const { body: first } = await api('GET', `/api/events/${eventIds[1]}`);
    const created = await api('POST', '/api/replays', {
      body: { filter: { sourceId, status: 'delivered', from: first.createdAt }, destinationIds: [destination.body.id], maxPerSecond: 100 },
    });
    expect(created.body).to.include({ matched: 2 });
    expect(created.body.destinationIds).to.deep.equal([destination.body.id]);
    expect(await finished(created.body.id)).to.include({ status: 'completed', replayed: 2 });
    await requestsSettle(other, destination.body.id, 2);
    expect(other.requests.map((request) => request.headers['x-relay-event-id'])).to.have.members(eventIds.slice(1));
  });

  it('a job with a search replays only the events whose payload matches, as its dry run counted', async () => {
    const { sourceId, destinationId, sink, eventIds } = await deliveredEvents(6, (n) => `{"n":${n},"kind":"${n % 3 === 0 ? 'chargeback' : 'order'}"}`);
    const filter = { sourceId, search: 'chargeback' };
    expect((await api('POST', '/api/replays', { body: { filter, dryRun: true } })).body.matched).to.equal(2);
    const created = await api('POST', '/api/replays', { body: { filter, maxPerSecond: 100 } });
    expect(created.body).to.include({ matched: 2 });
    expect(await finished(created.body.id)).to.include({ status: 'completed', replayed: 2 });
    await requestsSettle(sink, destinationId, 8);
    expect(await deliveryCounts(eventIds)).to.deep.equal([2, 1, 1, 2, 1, 1]);
  });

  it('cancel stops a running job where it is; a finished job answers 409 REPLAY_FINISHED', async () => {
    const { sourceId } = await deliveredEvents(4);
    const created = await api('POST', '/api/replays', { body: { filter: { sourceId }, maxPerSecond: 1 } });
    const cancelled = await api('POST', `/api/replays/${created.body.id}/cancel`);
    expect(cancelled.status).to.equal(200);
    expect(cancelled.body).to.include({ id: created.body.id, status: 'cancelled' });
    expect(cancelled.body.finishedAt).to.be.a('string');
    // A later job on the same runner, two events a second: it completes two seconds on, after the
    // cancelled job's next step (one a second) would have come, as each pass takes the older job first.
    const later = await api('POST', '/api/replays', { body: { filter: { sourceId }, maxPerSecond: 2 } });
    expect(await finished(later.body.id)).to.include({ status: 'completed', replayed: 4 });
    const after = (await api('GET', `/api/replays/${created.body.id}`)).body;
    expect(after.status).to.equal('cancelled');
    expect(after.replayed).to.be.below(4);
    const again = await api('POST', `/api/replays/${created.body.id}/cancel`);
    expect(again.status).to.equal(409);
    expect(again.body).to.include({ code: 'REPLAY_FINISHED' });
    expect((await api('POST', '/api/replays/rpl_00000000000000000000000000/cancel')).status).to.equal(404);
    expect((await api('GET', '/api/replays/rpl_00000000000000000000000000')).status).to.equal(404);
  });

  it('a job whose named destination is deleted meanwhile ends failed, saying why, with what it replayed before', async () => {
    const { sourceId } = await deliveredEvents(3);
    const other = await suite.sink([respond(200)]);
    const destination = await api('POST', '/api/destinations', { body: { name: 'Short-lived', url: other.url } });
    const created = await api('POST', '/api/replays', { body: { filter: { sourceId }, destinationIds: [destination.body.id], maxPerSecond: 1 } });
    await waitFor('the first step', async () => ((await api('GET', `/api/replays/${created.body.id}`)).body.replayed >= 1 ? true : undefined), isDefined, settleMs);
    expect((await api('DELETE', `/api/destinations/${destination.body.id}`)).status).to.equal(204);
    const job = await finished(created.body.id);
    expect(job.status).to.equal('failed');
    // The job says why it stopped.
    expect(job.error).to.be.a('string').and.include(destination.body.id);
    expect(job.replayed).to.be.within(1, 2);
    expect(job.finishedAt).to.be.a('string');
  });

  it('refuses unknown filter fields, from after to, maxPerSecond out of range, too many or unknown destinations, and creates nothing', async () => {
    const before = (await api('GET', '/api/replays')).body.pagination.total;
    for (const [body, field, status] of [
      [{ filter: { sourceId: 'src_x', color: 'red' } }, 'filter.color', 400],
      [{ filter: { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' } }, 'filter.from', 400],
      [{ filter: {}, maxPerSecond: 0 }, 'maxPerSecond', 400],
      [{ filter: {}, maxPerSecond: 10_001 }, 'maxPerSecond', 400],
      [{ filter: { status: 'lost' } }, 'filter.status', 400],
      [{}, 'filter', 400],
      // More destinations than a source may have routes (RELAY_MAX_ROUTES_PER_SOURCE, 100): refused before any is looked up.
      [{ filter: {}, destinationIds: Array.from({ length: 101 }, (_, n) => `dst_${n}`) }, 'destinationIds', 400],
    ] as const) {
      const response = await api('POST', '/api/replays', { body });
      expect(response.status, JSON.stringify(body)).to.equal(status);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
      expect(response.body.details.map((detail: { field: string }) => detail.field)).to.include(field);
    }
    const unknown = await api('POST', '/api/replays', { body: { filter: {}, destinationIds: ['dst_00000000000000000000000000'] } });
    expect(unknown.status).to.equal(404);
    expect((await api('GET', '/api/replays')).body.pagination.total).to.equal(before);
  });

  it('survives a restart of the relay mid-job: it goes on from where it was and replays every matched event once', async () => {
    const { sourceId, eventIds } = await deliveredEvents(8);
    const created = await api('POST', '/api/replays', { body: { filter: { sourceId }, maxPerSecond: 2 } });
    await waitFor('the job to be under way', async () => {
      const job = await api('GET', `/api/replays/${created.body.id}`);
      return job.body.replayed >= 2 ? true : undefined;
    }, isDefined, settleMs);
    await suite.harness.restart();
    const job = await finished(created.body.id, settleMs * 2);
    expect(job).to.include({ status: 'completed', matched: 8, replayed: 8, skipped: 0 });
    await waitFor('every replay delivery', async () => ((await deliveryCounts(eventIds)).every((count) => count === 2) ? true : undefined), isDefined, settleMs);
    expect(await deliveryCounts(eventIds)).to.deep.equal(eventIds.map(() => 2));
  });
});
