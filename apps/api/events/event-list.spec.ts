import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createDestination, createSource, orgIds, recordTries, seedEvent, type SeededEvent } from '../../../testing/event-fixtures.js';

const SUMMARY_KEYS = ['id', 'sourceId', 'status', 'headers', 'payloadSize', 'deliveriesCount', 'deliveriesSucceeded', 'receivedAt'];
const MINUTE = 60_000;

describeEachStore('GET /api/events', (target) => {
  let h: ApiHarness;
  let sourceOne: string;
  let sourceTwo: string;
  let destinationOne: string;
  let destinationTwo: string;
  // Oldest first: e[0] delivered (no routes), e[1] pending, e[2] failed and unsigned, e[3] partial, e[4] delivered.
  let e: SeededEvent[];
  let eventB: SeededEvent;
  let base: number;

  const ids = (response: { body: { data: { id: string }[] } }) => response.body.data.map((item) => item.id);
  const list = async (query: string) => {
    const response = await h.api('GET', `/api/events${query}`);
    expect(response.status, response.text).to.equal(200);
    return response;
  };
  const createdAt = (event: SeededEvent) => new Date(event.receivedAt + 5).toISOString();

  before(async function () {
    h = await startApiHarness(this, target);
    const org = await orgIds(h);
    sourceOne = (await createSource(h, { name: 'Shop', slug: 'shop' })).id;
    sourceTwo = (await createSource(h, { name: 'Billing', slug: 'billing' })).id;
    const sourceB = (await createSource(h, { name: 'B shop', slug: 'b-shop' }, h.apiB)).id;
    const one = await createDestination(h, { name: 'One', url: 'https://one.example.com/hook' });
    const two = await createDestination(h, { name: 'Two', url: 'https://two.example.com/hook' });
    [destinationOne, destinationTwo] = [one.id, two.id];
    const toOne = [{ destinationId: one.id, destinationName: one.name }];
    const toBoth = [...toOne, { destinationId: two.id, destinationName: two.name }];
    base = Date.now() - 3 * 60 * MINUTE;
    const at = (minutes: number) => base + minutes * MINUTE;
    e = [
      await seedEvent(h, { orgId: org.a, sourceId: sourceOne, receivedAt: at(0), body: '{"customer":{"email":"Alice@Example.com"},"note":"100%_off"}' }),
      await seedEvent(h, { orgId: org.a, sourceId: sourceOne, receivedAt: at(1), body: '{"customer":"bob"}', targets: toOne }),
      await seedEvent(h, { orgId: org.a, sourceId: sourceTwo, receivedAt: at(2), body: 'plain text from carol', contentType: 'text/plain', signatureValid: false, targets: toOne }),
      await seedEvent(h, { orgId: org.a, sourceId: sourceTwo, receivedAt: at(3), body: '{"customer":"dave","note":"100 percent off"}', targets: toBoth }),
      await seedEvent(h, { orgId: org.a, sourceId: sourceOne, receivedAt: at(4), body: '{"customer":"erin"}', targets: toOne }),
    ];
    await recordTries(h, e[2]!, e[2]!.deliveries[0]!, [{ statusCode: 500, latencyMs: 20, startedAt: at(2) + 10 }], { gaveUp: true });
    const [first, second] = e[3]!.deliveries;
    await recordTries(h, e[3]!, first!, [{ statusCode: 200, latencyMs: 20, startedAt: at(3) + 10 }]);
    await recordTries(h, e[3]!, second!, [{ statusCode: 404, latencyMs: 20, startedAt: at(3) + 10 }], { gaveUp: true });
    await recordTries(h, e[4]!, e[4]!.deliveries[0]!, [{ statusCode: 204, latencyMs: 20, startedAt: at(4) + 10 }]);
    eventB = await seedEvent(h, { orgId: org.b, sourceId: sourceB, receivedAt: at(5), body: '{"customer":"Alice@Example.com"}' });
  });

  after(async () => {
    await h?.stop();
  });

  it('lists the summary form of every event, newest first, with total, page and pageSize', async () => {
    const response = await list('');
    expect(ids(response)).to.deep.equal([...e].reverse().map((x) => x.eventId));
    expect(response.body.pagination).to.deep.equal({ total: 5, page: 1, pageSize: 20, totalExact: true });
    const item = response.body.data.find((x: { id: string }) => x.id === e[3]!.eventId);
    expect(Object.keys(item)).to.have.members(SUMMARY_KEYS);
    expect(item).to.deep.equal({
      id: e[3]!.eventId,
      sourceId: sourceTwo,
      status: 'partial',
      headers: { 'content-type': 'application/json' },
      payloadSize: Buffer.byteLength('{"customer":"dave","note":"100 percent off"}'),
      deliveriesCount: 2,
      deliveriesSucceeded: 1,
      receivedAt: new Date(e[3]!.receivedAt).toISOString(),
    });
  });

  it('pages through the list', async () => {
    const response = await list('?page=2&pageSize=2');
    expect(ids(response)).to.deep.equal([e[2]!.eventId, e[1]!.eventId]);
    expect(response.body.pagination).to.deep.equal({ total: 5, page: 2, pageSize: 2, totalExact: true });
    expect(ids(await list('?page=4&pageSize=2'))).to.deep.equal([]);
  });

  it('filters by sourceId', async () => {
    expect(ids(await list(`?sourceId=${sourceTwo}`))).to.deep.equal([e[3]!.eventId, e[2]!.eventId]);
    expect((await list('?sourceId=src_unknown')).body).to.deep.equal({ data: [], pagination: { total: 0, page: 1, pageSize: 20, totalExact: true } });
  });

  it('filters by destinationId: the events with a delivery to it, counted exactly, alone and with other filters', async () => {
    const toOne = await list(`?destinationId=${destinationOne}&pageSize=2`);
    expect(ids(toOne)).to.deep.equal([e[4]!.eventId, e[3]!.eventId]);
    expect(toOne.body.pagination).to.deep.equal({ total: 4, page: 1, pageSize: 2, totalExact: true });
    const toTwo = await list(`?destinationId=${destinationTwo}&sourceId=${sourceTwo}`);
    expect(ids(toTwo)).to.deep.equal([e[3]!.eventId]);
    expect(toTwo.body.pagination.total).to.equal(1);
    expect(ids(await list(`?destinationId=${destinationOne}&status=failed`))).to.deep.equal([e[2]!.eventId]);
    expect(ids(await list(`?destinationId=${destinationOne}&search=erin`))).to.deep.equal([e[4]!.eventId]);
    expect((await list('?destinationId=dst_unknown')).body.pagination.total).to.equal(0);
    expect(ids(await h.apiB('GET', `/api/events?destinationId=${destinationOne}`))).to.deep.equal([]);
  });

  it('filters by status, alone and with sourceId', async () => {
    expect(ids(await list('?status=delivered'))).to.deep.equal([e[4]!.eventId, e[0]!.eventId]);
    expect(ids(await list('?status=pending'))).to.deep.equal([e[1]!.eventId]);
    expect(ids(await list('?status=failed'))).to.deep.equal([e[2]!.eventId]);
    expect(ids(await list('?status=partial'))).to.deep.equal([e[3]!.eventId]);
    expect(ids(await list(`?status=delivered&sourceId=${sourceOne}`))).to.deep.equal([e[4]!.eventId, e[0]!.eventId]);
    expect(ids(await list(`?status=delivered&sourceId=${sourceTwo}`))).to.deep.equal([]);
  });

  it('filters by a from/to range on createdAt, both ends included', async () => {
    expect(ids(await list(`?from=${createdAt(e[1]!)}&to=${createdAt(e[3]!)}`))).to.deep.equal([e[3]!.eventId, e[2]!.eventId, e[1]!.eventId]);
    expect(ids(await list(`?from=${createdAt(e[4]!)}`))).to.deep.equal([e[4]!.eventId]);
    expect(ids(await list(`?to=${createdAt(e[0]!)}`))).to.deep.equal([e[0]!.eventId]);
  });

  it('takes dates, and date-times with an offset', async () => {
    expect((await list('?from=2000-01-01&to=2999-12-31')).body.pagination.total).to.equal(5);
    const offset = new Date(e[4]!.receivedAt + 5).toISOString().replace('Z', '+00:00');
    expect(ids(await list(`?from=${encodeURIComponent(offset)}`))).to.deep.equal([e[4]!.eventId]);
  });

  it('searches the payload text, case-insensitively, as a substring', async () => {
    expect(ids(await list('?search=alice%40EXAMPLE'))).to.deep.equal([e[0]!.eventId]);
    expect(ids(await list('?search=Carol'))).to.deep.equal([e[2]!.eventId]);
    expect(ids(await list('?search=percent%20off'))).to.deep.equal([e[3]!.eventId]);
    expect(ids(await list('?search=nobody-has-this'))).to.deep.equal([]);
  });

  it('searches terms shorter than three characters too', async () => {
    expect(ids(await list('?search=OB'))).to.deep.equal([e[1]!.eventId]);
  });

  it('takes % and _ in a search literally', async () => {
    expect(ids(await list('?search=%25_off'))).to.deep.equal([e[0]!.eventId]);
    expect(ids(await list('?search=_'))).to.deep.equal([e[0]!.eventId]);
  });

  it('combines search with the other filters', async () => {
    expect(ids(await list(`?search=customer&sourceId=${sourceOne}&status=delivered`))).to.deep.equal([e[4]!.eventId, e[0]!.eventId]);
    expect((await list(`?search=customer&pageSize=1&page=2`)).body.pagination.total).to.equal(4);
  });

  it('filters by signatureValid', async () => {
    expect(ids(await list('?signatureValid=false'))).to.deep.equal([e[2]!.eventId]);
    expect(ids(await list('?signatureValid=true'))).to.have.length(4);
  });

  it('shows another organization none of these events, and only its own', async () => {
    const response = await h.apiB('GET', '/api/events');
    expect(ids(response)).to.deep.equal([eventB.eventId]);
    expect(ids(await h.apiB('GET', `/api/events?sourceId=${sourceOne}`))).to.deep.equal([]);
    expect(ids(await h.apiB('GET', '/api/events?search=carol'))).to.deep.equal([]);
  });

  describe('bad input', () => {
    const rejects = async (query: string, field: string) => {
      const response = await h.api('GET', `/api/events${query}`);
      expect(response.status, response.text).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
      expect(response.body.details.map((d: { field: string }) => d.field)).to.include(field);
    };

    it('answers 400 for a date that is not ISO 8601, or has no time zone', async () => {
      await rejects('?from=yesterday', 'from');
      await rejects('?to=2024-13-01', 'to');
      await rejects('?from=2024-01-01T10:00:00', 'from');
    });

    it('answers 400 when from is after to', async () => {
      await rejects('?from=2024-02-01T00:00:00Z&to=2024-01-01T00:00:00Z', 'from');
    });

    it('answers 400 for a signatureValid that is not true or false', async () => {
      await rejects('?signatureValid=yes', 'signatureValid');
    });

    it('answers 400 for an unknown status and bad pagination', async () => {
      await rejects('?status=done', 'status');
      await rejects('?page=0', 'page');
      await rejects('?pageSize=many', 'pageSize');
    });
  });
});
