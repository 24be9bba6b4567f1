import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createClient } from 'redis';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';

const RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:5672/%2F';

describeEachStore('queue destinations through the API', (storeTarget) => {
  let h: ApiHarness;
  const redis = createClient({ url: 'redis://127.0.0.1:6379' });
  const stream = `relay-test:api-${randomBytes(5).toString('hex')}`;

  before(async function () {
    h = await startApiHarness(this, storeTarget);
    await redis.connect();
  });

  after(async () => {
    await redis.del(stream);
    await redis.quit();
    await h?.stop();
  });

  const create = (body: Record<string, unknown>) => h.api('POST', '/api/destinations', { body: { name: `queue-${randomBytes(3).toString('hex')}`, ...body } });
  const rabbitmq = { type: 'rabbitmq', target: { url: RABBITMQ_URL, exchange: 'amq.direct', routingKey: 'relay-test-unbound' } };

  it('shows a queue target with the credentials in its URL as ****, and no url, in every view and export', async () => {
    const created = await create(rabbitmq);
    expect(created.status, created.text).to.equal(201);
    const masked = { url: 'amqp://****@127.0.0.1:5672/%2F', exchange: 'amq.direct', routingKey: 'relay-test-unbound' };
    expect(created.body).to.deep.include({ type: 'rabbitmq', target: masked });
    expect(created.body).not.to.have.property('url');
    const { id } = created.body;
    expect((await h.api('GET', `/api/destinations/${id}`)).body.target).to.deep.equal(masked);
    const listed = await h.api('GET', '/api/destinations');
    expect(listed.body.data.find((row: { id: string }) => row.id === id)).to.include({ type: 'rabbitmq' }).and.not.to.have.property('url');
    const exported = await h.api('GET', `/api/destinations/export?ids=${id}`);
    expect(exported.body.destinations[0].target).to.deep.equal(masked);
    expect(exported.text).not.to.include('guest:guest');
    const row = (await h.rawRow('destinations', id))!;
    expect(JSON.stringify(row)).not.to.include('guest:guest');
  });

  it('keeps the stored credentials when a masked target is sent back', async () => {
    const { body } = await create(rabbitmq);
    const patched = await h.api('PATCH', `/api/destinations/${body.id}`, { body: { target: { ...body.target, routingKey: 'other' } } });
    expect(patched.status, patched.text).to.equal(200);
    const sensitive = await h.api('GET', `/api/destinations/export?includeSensitive=true&ids=${body.id}`);
    expect(sensitive.body.destinations[0].target).to.deep.include({ url: RABBITMQ_URL, routingKey: 'other' });
  });

  it('validates the target by type, with 400 VALIDATION_ERROR naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'rabbitmq' }, 'target'],
      [{ ...rabbitmq, target: { ...rabbitmq.target, exchange: 7 } }, 'target.exchange'],
      [{ ...rabbitmq, url: 'https://example.com/in' }, 'url'],
      [{ ...rabbitmq, authType: 'bearer', authConfig: { token: 'tok-123456' } }, 'authType'],
      [{ type: 'nats', target: { url: 'http://127.0.0.1:4222', subject: 'orders' } }, 'target.url'],
      [{ type: 'kafka', target: { brokers: ['127.0.0.1:9092'], topic: 'relay.events' } }, 'target.topic'],
      [{ type: 'redis', target: { url: 'redis://127.0.0.1:6379', stream: 'orders', maxLen: 0 } }, 'target.maxLen'],
      [{ type: 'http', target: { url: 'https://example.com' } }, 'target'],
    ];
    for (const [body, field] of cases) {
      const response = await create(body);
      expect(response.status, `${JSON.stringify(body)}: ${response.text}`).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
      expect(response.body.message, JSON.stringify(body)).to.include(field);
    }
  });

  it('publishes a test message to the target, and reports a refused one as a failed test', async () => {
    const { body } = await create({ type: 'redis', target: { url: 'redis://127.0.0.1:6379', stream } });
    const published = await h.api('POST', `/api/destinations/${body.id}/test`, { body: {} });
    expect(published.status, published.text).to.equal(200);
    expect(published.body).to.include({ success: true, statusCode: null });
    const [entry] = (await redis.xRange(stream, '-', '+')) ?? [];
    expect(JSON.parse(String(entry!.message.body)).type).to.equal('relay.test');
    expect(JSON.parse(String(entry!.message.headers))).to.include({ 'X-Relay-Test': 'true' });

    const unroutable = await create(rabbitmq);
    const refused = await h.api('POST', `/api/destinations/${unroutable.body.id}/test`, { body: {} });
    expect(refused.status, refused.text).to.equal(200);
    expect(refused.body).to.include({ success: false, statusCode: null });
    expect(refused.body.error).to.include('No queue is bound');
  });

  it('round-trips through an includeSensitive export and an import, credentials included', async () => {
    const { body } = await create({ ...rabbitmq, slug: `round-${randomBytes(3).toString('hex')}` });
    const exported = await h.api('GET', `/api/destinations/export?includeSensitive=true&ids=${body.id}`);
    const imported = await h.api('POST', '/api/destinations/import', { body: { destinations: exported.body.destinations, conflictStrategy: 'rename' } });
    expect(imported.status, imported.text).to.equal(200);
    expect(imported.body.summary).to.include({ imported: 1, failed: 0 });
    const listed = await h.api('GET', `/api/destinations?search=${encodeURIComponent(body.name)}`);
    const copy = listed.body.data.find((row: { id: string }) => row.id !== body.id);
    const sensitive = await h.api('GET', `/api/destinations/export?includeSensitive=true&ids=${copy.id}`);
    expect(sensitive.body.destinations[0]).to.deep.include({ type: 'rabbitmq', target: rabbitmq.target });
  });

  it('imports an export without secrets as disabled, without the masked target credentials, with a warning; an overwrite keeps them', async () => {
    const kafka = { type: 'kafka', target: { brokers: ['127.0.0.1:9092'], topic: 'relay-orders', sasl: { mechanism: 'plain', username: 'relay', password: 'kafka-secret' } } };
    const made = [await create(rabbitmq), await create(kafka)].map((response) => response.body as { id: string; name: string });
    const exported = await h.api('GET', `/api/destinations/export?ids=${made.map((d) => d.id).join(',')}`);
    const entries = exported.body.destinations as Record<string, unknown>[];
    expect(entries.map((entry) => entry.target)).to.deep.include.members([{ ...rabbitmq.target, url: 'amqp://****@127.0.0.1:5672/%2F' }]);

    const imported = await h.apiB('POST', '/api/destinations/import', { body: { destinations: entries, conflictStrategy: 'skip' } });
    expect(imported.status, imported.text).to.equal(200);
    expect(imported.body.summary).to.include({ imported: 2, failed: 0 });
    const warnings = Object.fromEntries(imported.body.results.map((result: { name: string; warnings: string[] }) => [result.name, result.warnings]));
    const lost = (field: string) => [`${field} credentials are masked with no stored value: the destination is imported disabled without them; set them, then enable it`];
    expect(warnings).to.deep.equal({ [made[0]!.name]: lost('target.url'), [made[1]!.name]: lost('target.sasl') });
    const inB = (await h.apiB('GET', '/api/destinations/export?includeSensitive=true')).body.destinations as Record<string, unknown>[];
    const copy = (name: string) => inB.find((entry) => entry.name === name)!;
    expect(copy(made[0]!.name)).to.deep.include({ isActive: false, target: { ...rabbitmq.target, url: 'amqp://127.0.0.1:5672/%2F' } });
    expect(copy(made[1]!.name)).to.deep.include({ isActive: false, target: { brokers: ['127.0.0.1:9092'], topic: 'relay-orders', ssl: false, key: 'sourceId' } });
    const listed = (await h.apiB('GET', '/api/destinations')).body.data as { id: string; name: string }[];
    const copyId = listed.find((row) => row.name === made[0]!.name)!.id;
    expect((await h.apiB('GET', `/api/destinations/${copyId}`)).body).to.include({ enabled: false, disabledReason: 'manual' });

    // Into the organization that holds them, the masks stand for the stored credentials.
    const overwritten = await h.api('POST', '/api/destinations/import', { body: { destinations: entries, conflictStrategy: 'overwrite' } });
    expect(overwritten.body.summary, overwritten.text).to.include({ overwritten: 2, failed: 0 });
    expect(overwritten.body.results.flatMap((result: { warnings: string[] }) => result.warnings)).to.deep.equal([]);
    const kept = (await h.api('GET', `/api/destinations/export?includeSensitive=true&ids=${made.map((d) => d.id).join(',')}`)).body.destinations as Record<string, unknown>[];
    const keptOf = (name: string) => kept.find((entry) => entry.name === name)!;
    expect(keptOf(made[0]!.name)).to.deep.include({ isActive: true, target: rabbitmq.target });
    expect(keptOf(made[1]!.name)).to.deep.include({ isActive: true, target: { ...kafka.target, ssl: false, key: 'sourceId' } });
  });
});
