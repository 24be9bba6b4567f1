import { createRelayTracer } from '../../libs/tracing/relay-tracer.js';
import { expect } from 'chai';
import type { BrokerRecord, OutgoingMessage } from '../../libs/broker/broker.js';
import { payloadHash } from '../../libs/dedup/payload-hash.js';
import { newId } from '../../libs/ids/ids.js';
import { encodeIngestMessage, type IngestMeta } from '../../libs/pipeline/ingest-message.js';
import { decodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { createSecretBox } from '../../libs/secrets/secret-box.js';
import { compileFilter } from '../../libs/filters/route-filter.js';
import { FIELD_WORK_BUDGET } from '../../libs/payload/field-budget.js';
import { FIRST_ROUND_SHARE } from '../../libs/pipeline/fair-rounds.js';
import { openStoreFixture, sourceRow, type StoreFixture } from '../../libs/testing/store-fixtures.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { createEventRouter, routeEvents, type RouterDeps } from './route-events.js';
import { createThreadedSandbox } from '../../libs/transformations/threaded-sandbox.js';
import { transformationRunner } from '../../libs/transformations/transformation-runner.js';
import { DEFAULT_PLAN_LIMITS } from '../../libs/config/plan-limits.js';
import { INGEST_TOPIC } from '../../libs/pipeline/topology.js';

describeEachStore('routeEvents', (target) => {
  let fixture: StoreFixture;
  let sources: string[];
  let published: { topic: string; message: OutgoingMessage }[];
  const destinations = [
    { destinationId: newId('dst'), destinationName: 'Orders' },
    { destinationId: newId('dst'), destinationName: 'Audit' },
  ];

  beforeEach(async function () {
    fixture = await openStoreFixture(this, target);
    sources = [(await fixture.createSource()).id, (await fixture.createSource()).id];
    published = [];
  });

  afterEach(async () => {
    await fixture?.close();
  });

  const deps = (overrides: Partial<RouterDeps> = {}): RouterDeps => ({
    sql: fixture.store.sql,
    routesFor: async () => destinations.map((d) => ({ ...d, routeId: `rte_${d.destinationId}`, filter: null, destinationOrdered: false, transformation: null, delaySeconds: 0 })),
    publish: async (topic, messages) => void published.push(...messages.map((message) => ({ topic, message }))),
    now: () => 1_700_000_000_000,
    tracer: createRelayTracer({ serviceName: 'route-events-spec', sampleRatio: 1 }),
    secrets: createSecretBox(Buffer.alloc(32, 3)),
    deadLetters: async (reason) => {
      throw new Error(`dead-lettered: ${reason}`);
    },
    ...overrides,
  });

  function record(sourceId: string, receivedAt: number, overrides: Partial<IngestMeta> = {}, body = Buffer.from(`{"n":${receivedAt}}`)): BrokerRecord {
    const meta: IngestMeta = {
      eventId: newId('evt'),
      orgId: fixture.org.id,
      sourceId,
      headers: { 'content-type': 'application/json' },
      contentType: 'application/json',
      clientIp: '127.0.0.1',
      payloadHash: payloadHash(body),
      payloadSize: body.length,
      signatureValid: true,
      receivedAt,
      validatedAt: receivedAt,
      queuedAt: receivedAt,
      ...overrides,
    };
    const message = encodeIngestMessage(meta, body);
    return { topic: INGEST_TOPIC, partition: 0, offset: '0', timestamp: receivedAt, key: message.key, value: message.value, headers: message.headers ?? {} };
  }

  const route = (records: BrokerRecord[], overrides: Partial<RouterDeps> = {}) => routeEvents(deps(overrides), { topic: INGEST_TOPIC, partition: 0, records });
  const publishedEventIds = () => published.map(({ message }) => decodeDeliveryJob({ ...message, topic: '', partition: 0, offset: '0', timestamp: 0, headers: message.headers ?? {} } as BrokerRecord).job.eventId);
  const eventIdOf = (r: BrokerRecord) => (JSON.parse(String(r.headers['relay-meta'])) as IngestMeta).eventId;
  const publishedDeliveries = () => published.map(({ message }) => decodeDeliveryJob({ ...message, topic: '', partition: 0, offset: '0', timestamp: 0, headers: message.headers ?? {} } as BrokerRecord).job.deliveryId).sort();
  const storedDeliveries = async () => (await fixture.store.sql.all<{ id: string }>('SELECT id FROM deliveries ORDER BY id')).map((row) => row.id);

  it('stores a batch of events with one pending delivery per destination, publishes a job for each, and notes each source\'s last event', async () => {
    const records = Array.from({ length: 70 }, (_, i) => record(sources[i % 2]!, 1_000 + i));
    await route(records);
    const [events] = await fixture.store.sql.all<{ n: number | string }>("SELECT COUNT(*) AS n FROM events WHERE status = 'pending' AND deliveries_count = 2");
    expect(Number(events!.n)).to.equal(70);
    expect(await storedDeliveries()).to.have.length(140);
    expect(publishedDeliveries()).to.deep.equal(await storedDeliveries());
    const lastEvents = await fixture.store.sql.all<{ id: string; at: number | string }>('SELECT id, last_event_at AS at FROM sources ORDER BY id');
    expect(Object.fromEntries(lastEvents.map((row) => [row.id, Number(row.at)]))).to.deep.equal({ [sources[0]!]: 1_068, [sources[1]!]: 1_069 });
  });

  it("copies the source's slug into each job, and leaves it out for an older gateway's record that has none", async () => {
    await route([record(sources[0]!, 1_000, { sourceSlug: 'shop-events' }), record(sources[1]!, 1_001)]);
    const jobs = published.map(({ message }) => decodeDeliveryJob({ ...message, topic: '', partition: 0, offset: '0', timestamp: 0, headers: message.headers ?? {} }).job);
    expect(jobs.map((job) => [job.sourceId, job.sourceSlug])).to.have.deep.members([
      [sources[0], 'shop-events'],
      [sources[0], 'shop-events'],
      [sources[1], undefined],
      [sources[1], undefined],
    ]);
  });

  it('creates nothing again for a redelivered batch, and publishes the stored pending deliveries again', async () => {
    const records = [record(sources[0]!, 1_000), record(sources[1]!, 1_001)];
    await route(records);
    const first = await storedDeliveries();
    published = [];
    await route([...records, record(sources[0]!, 1_002)]);
    const stored = await storedDeliveries();
    expect(stored).to.have.length(6);
    expect(stored).to.include.members(first);
    expect(publishedDeliveries()).to.deep.equal(stored);
  });

  it('stores an event whose record comes twice in one batch once, and publishes its deliveries for both records', async () => {
    const once = record(sources[0]!, 1_000);
    await route([once, once]);
    const stored = await storedDeliveries();
    expect(stored).to.have.length(2);
    expect(publishedDeliveries()).to.deep.equal([...stored, ...stored].sort());
  });

  it("publishes nothing for a duplicate's copy of a stored event, and stores the event from the copy when the original never arrived", async () => {
    const original = record(sources[0]!, 1_000);
    await route([original]);
    published = [];
    const copy = record(sources[0]!, 1_001, { eventId: eventIdOf(original), duplicate: true });
    const orphanCopy = record(sources[1]!, 1_002, { duplicate: true });
    await route([copy, orphanCopy]);
    const orphanDeliveries = await fixture.store.sql.all<{ id: string }>('SELECT id FROM deliveries WHERE event_id = ? ORDER BY id', [eventIdOf(orphanCopy)]);
    expect(orphanDeliveries).to.have.length(2);
    expect(publishedDeliveries()).to.deep.equal(orphanDeliveries.map((row) => row.id));
  });

  it("routes another organization's few events in the batch's first round, before the rest of one organization's many", async () => {
    const other = await fixture.store.organizations.create(`other-${newId('org').slice(-8)}`, 'pro');
    const otherSource = await fixture.store.sources.insert(sourceRow(other.id));
    const many = Array.from({ length: 3 * FIRST_ROUND_SHARE }, (_, i) => record(sources[0]!, 1_000 + i));
    const few = record(otherSource.id, 2_000, { orgId: other.id });
    await route([...many, few]);
    const order = publishedEventIds();
    // Two jobs an event; the other organization's come before the many's (FIRST_ROUND_SHARE + 1)th event's.
    expect(order.indexOf(eventIdOf(few))).to.be.below(order.indexOf(eventIdOf(many[FIRST_ROUND_SHARE]!)));
    expect(new Set(order)).to.have.property('size', many.length + 1);
    const [stored] = await fixture.store.sql.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM events');
    expect(Number(stored!.n)).to.equal(many.length + 1);
  });

  it('stores an event whose filter and search text run past its field budget: the filter does not take it, nothing of it is searchable, the unfiltered route delivers it; the next event has a budget of its own', async () => {
    const masked = await fixture.store.sources.insert(sourceRow(fixture.org.id, { maskFields: ['$..secret'] }));
    const [open, filtered] = destinations;
    const routesFor = async () => [
      { ...open!, routeId: 'rte_open', filter: null, destinationOrdered: false, transformation: null, delaySeconds: 0 },
      { ...filtered!, routeId: 'rte_filtered', filter: compileFilter({ body: { tags: 'needle' } }), destinationOrdered: false, transformation: null, delaySeconds: 0 },
    ];
    // The filter would take it, but comparing the tag with every item of the list is past the budget.
    const body = Buffer.from(JSON.stringify({ secret: 's', tags: [...Array.from({ length: FIELD_WORK_BUDGET }, () => 't'), 'needle'] }));
    const heavy = record(masked.id, 1_000, { payloadSize: body.length }, body);
    const light = record(masked.id, 1_001, {}, Buffer.from('{"secret":"s","tags":["t","needle"]}'));
    await route([heavy, light], { routesFor });
    const rows = await fixture.store.sql.all<{ id: string; status: string; deliveries_count: number | string; filtered_route_ids: string; payload_text: string | null }>(
      'SELECT id, status, deliveries_count, filtered_route_ids, payload_text FROM events ORDER BY received_at',
    );
    expect(rows.map((row) => [row.id, row.status, Number(row.deliveries_count), JSON.parse(row.filtered_route_ids)])).to.deep.equal([
      [eventIdOf(heavy), 'pending', 1, ['rte_filtered']],
      [eventIdOf(light), 'pending', 2, []],
    ]);
    expect(rows.map((row) => row.payload_text)).to.deep.equal([null, '{"secret":"****","tags":["t","needle"]}']);
    expect(publishedEventIds()).to.have.members([eventIdOf(heavy), eventIdOf(light), eventIdOf(light)]);
  });
  it("routes another organization's events while one organization's slow transformations wait behind the handler, and routes those in order after it", async function () {
    const sandbox = await createThreadedSandbox({ timeoutMs: 5_000, memoryMb: 16 });
    const secrets = createSecretBox(Buffer.alloc(32, 3));
    const other = await fixture.store.organizations.create(`other-${newId('org').slice(-8)}`, 'pro');
    const otherSource = await fixture.store.sources.insert(sourceRow(other.id));
    // Each call takes 30 ms at least, however fast the machine: past the budget of 40 ms by the second.
    const slow = { id: 'trs_slow', code: 'function transform(request) { const start = Date.now(); while (Date.now() - start < 30); return request; }', sealedEnv: secrets.seal('{}'), plan: 'pro' as const };
    const routesFor = async (sourceId: string) => [{ ...destinations[0]!, routeId: `rte_${sourceId}`, filter: null, destinationOrdered: false, transformation: sourceId === otherSource.id ? null : slow, delaySeconds: 0 }];
    const router = createEventRouter(deps({ routesFor, secrets, transformations: transformationRunner({ sandbox, secrets, limits: DEFAULT_PLAN_LIMITS }), transformationBudgetMs: 40 }));
    const slowRecords = Array.from({ length: 8 }, (_, i) => record(sources[0]!, 1_000 + i));
    const otherRecords = [record(otherSource.id, 2_000, { orgId: other.id }), record(otherSource.id, 2_001, { orgId: other.id })];
    try {
      const outcome = await router.routeBatch({ topic: INGEST_TOPIC, partition: 0, records: [...slowRecords, ...otherRecords] });
      // The handler is back after two slow calls: the other organization's events are routed, most slow ones wait.
      expect(publishedEventIds()).to.include.members(otherRecords.map(eventIdOf));
      expect(publishedEventIds().filter((id) => slowRecords.map(eventIdOf).includes(id)).length).to.be.below(slowRecords.length);
      expect(outcome).to.have.property('handled', 10);
      // A later batch's event of the slow organization waits behind its earlier ones; the other's does not.
      const laterSlow = record(sources[0]!, 1_100);
      const laterOther = record(otherSource.id, 2_100, { orgId: other.id });
      const next = await router.routeBatch({ topic: INGEST_TOPIC, partition: 0, records: [laterSlow, laterOther] });
      expect(publishedEventIds()).to.include(eventIdOf(laterOther));
      expect(publishedEventIds()).not.to.include(eventIdOf(laterSlow));
      await (outcome as { completion: Promise<void> }).completion;
      await (next as { completion: Promise<void> }).completion;
      const slowOrder = publishedEventIds().filter((id) => ![...otherRecords, laterOther].map(eventIdOf).includes(id));
      expect(slowOrder).to.deep.equal([...slowRecords, laterSlow].map(eventIdOf));
      expect(await storedDeliveries()).to.have.length(slowRecords.length + otherRecords.length + 2);
    } finally {
      await sandbox.dispose();
    }
  });
});
