import { expect } from 'chai';
import { createHttpSender } from '../../../libs/delivery/send-request.js';
import { latencyBucket } from '../../../libs/stats/latency-buckets.js';
import { respond, startHttpSink, type HttpSink } from '../../../libs/testing/http-sink.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { recordAttempts } from '../../../libs/ledger/attempts.js';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createDestination, createSource, orgIds, recordTries, seedEvent, type Try } from '../../../testing/event-fixtures.js';

const HOUR = 3_600_000;

/** Nearest-rank percentile of the exact values. */
function truePercentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
}

/** `okCount` successes then failures, started a second apart from `startedAt`, with the given latencies. */
function tries(total: number, okCount: number, startedAt: number, latency: (i: number) => number = () => 50): Try[] {
  return Array.from({ length: total }, (_, i) => ({ statusCode: i < okCount ? 200 : 503, latencyMs: latency(i), startedAt: startedAt + i * 1000 }));
}

describeEachStore('Destination health and statistics', (target) => {
  let h: ApiHarness;
  let sink: HttpSink;
  let orgA: string;
  let sourceId: string;

  before(async function () {
    h = await startApiHarness(this, target);
    sink = await startHttpSink();
    orgA = (await orgIds(h)).a;
    sourceId = (await createSource(h, { name: 'Shop', slug: 'shop' })).id;
  });

  after(async () => {
    await sink?.close();
    await h?.stop();
  });

  /** A destination whose one delivery was tried as listed. */
  async function destinationTried(name: string, list: Try[]) {
    const destination = await createDestination(h, { name, url: `${sink.url}/${name}` });
    const event = await seedEvent(h, { orgId: orgA, sourceId, targets: [{ destinationId: destination.id, destinationName: name }] });
    const attempts = list.length ? await recordTries(h, event, event.deliveries[0]!, list) : [];
    return { id: destination.id, event, attempts };
  }

  const health = async (id: string) => {
    const response = await h.api('GET', `/api/destinations/${id}/health`);
    expect(response.status, response.text).to.equal(200);
    return response.body;
  };

  it('reports a sink that fails one attempt in ten as degraded at 90 %, with counts and percentiles of the real latencies', async () => {
    const failing = await startHttpSink((_request, index) => respond(index % 10 === 9 ? 500 : 200, { delayMs: (index % 10) * 8 }));
    const sender = createHttpSender({ blockPrivateDestinations: false });
    try {
      const destination = await createDestination(h, { name: 'flaky', url: `${failing.url}/in` });
      const event = await seedEvent(h, { orgId: orgA, sourceId, targets: [{ destinationId: destination.id, destinationName: 'flaky' }] });
      const list: Try[] = [];
      for (let i = 0; i < 30; i += 1) {
        const startedAt = Date.now();
        const outcome = await sender.send({ method: 'POST', url: `${failing.url}/in`, headers: {}, body: Buffer.from('{}') }, { timeoutMs: 5000 });
        list.push({ statusCode: outcome.statusCode, latencyMs: outcome.latencyMs, startedAt });
      }
      await recordTries(h, event, event.deliveries[0]!, list);
      const report = await health(destination.id);
      expect(report).to.deep.include({ successRate: 90, status: 'degraded', totalDeliveries: 30, successfulDeliveries: 27, failedDeliveries: 3 });
      const latencies = list.map((t) => t.latencyMs);
      expect(report.avgLatency).to.equal(Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length));
      for (const [field, p] of [['p50Latency', 50], ['p95Latency', 95], ['p99Latency', 99]] as const) {
        expect(Math.abs(latencyBucket(report[field]) - latencyBucket(truePercentile(latencies, p))), field).to.be.at.most(1);
      }
    } finally {
      await sender.close();
      await failing.close();
    }
  });

  it('estimates p50, p95 and p99 within one bucket of the exact values', async () => {
    const latency = (i: number) => (i + 1) * 10;
    const { id } = await destinationTried('spread', tries(100, 100, Date.now() - HOUR, latency));
    const report = await health(id);
    const exact = Array.from({ length: 100 }, (_, i) => latency(i));
    expect(report.avgLatency).to.equal(505);
    for (const [field, p] of [['p50Latency', 50], ['p95Latency', 95], ['p99Latency', 99]] as const) {
      expect(Math.abs(latencyBucket(report[field]) - latencyBucket(truePercentile(exact, p))), `${field}: ${report[field]}`).to.be.at.most(1);
    }
  });

  it('draws the status lines where the spec does: above 95 healthy, 80 to 95 degraded, below 80 failing', async () => {
    const start = Date.now() - 2 * HOUR;
    const cases = [
      [96, 'healthy'],
      [95, 'degraded'],
      [80, 'degraded'],
      [79, 'failing'],
    ] as const;
    for (const [okCount, status] of cases) {
      const { id } = await destinationTried(`rate-${okCount}`, tries(100, okCount, start));
      expect(await health(id), `${okCount} of 100`).to.deep.include({ successRate: okCount, status });
    }
  });

  it('is unknown with no attempt in the last 24 hours, yet still tells when the last ones were', async () => {
    const never = await destinationTried('never', []);
    expect(await health(never.id)).to.deep.equal({
      successRate: null,
      avgLatency: null,
      p50Latency: null,
      p95Latency: null,
      p99Latency: null,
      totalDeliveries: 0,
      successfulDeliveries: 0,
      failedDeliveries: 0,
      lastDeliveryAt: null,
      lastSuccessAt: null,
      lastFailureAt: null,
      status: 'unknown',
      circuitState: 'closed',
    });
    const longAgo = Date.now() - 26 * HOUR;
    const stale = await destinationTried('stale', [
      { statusCode: 200, latencyMs: 30, startedAt: longAgo },
      { statusCode: 500, latencyMs: 40, startedAt: longAgo + 5000 },
    ]);
    const report = await health(stale.id);
    expect(report).to.deep.include({ status: 'unknown', totalDeliveries: 0, successRate: null });
    expect(report.lastSuccessAt).to.equal(new Date(longAgo + 30).toISOString());
    expect(report.lastFailureAt).to.equal(new Date(longAgo + 5040).toISOString());
    expect(report.lastDeliveryAt).to.equal(report.lastFailureAt);
  });

  it('shows the same statistics on the destination and in the list', async () => {
    const { id, attempts } = await destinationTried('shown', tries(10, 9, Date.now() - 3 * HOUR, (i) => 100 + i));
    const report = await health(id);
    const one = (await h.api('GET', `/api/destinations/${id}`)).body;
    expect(one).to.deep.include({ successRate: 90, avgLatency: report.avgLatency, deliveriesCount: 10, circuitState: 'closed' });
    expect(one.lastDeliveryAt).to.equal(new Date(Math.max(...attempts.map((a) => a.completedAt))).toISOString());
    const listed = (await h.api('GET', '/api/destinations?search=shown')).body.data;
    expect(listed).to.deep.equal([{ id, name: 'shown', url: `${sink.url}/shown`, enabled: true, successRate: 90, avgLatency: report.avgLatency, deliveriesCount: 10 }]);
  });

  it('counts an attempt recorded twice once', async () => {
    const { id, attempts } = await destinationTried('twice', tries(4, 3, Date.now() - HOUR));
    await recordAttempts(h.relay.store.sql, attempts);
    expect(await health(id)).to.deep.include({ totalDeliveries: 4, successfulDeliveries: 3 });
  });

  it('answers 404 RESOURCE_NOT_FOUND for an unknown destination and for another organization', async () => {
    const { id } = await destinationTried('private', tries(1, 1, Date.now()));
    for (const [call, destinationId] of [[h.api, 'dst_unknown'], [h.apiB, id]] as const) {
      const response = await call('GET', `/api/destinations/${destinationId}/health`);
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
    }
  });
});
