import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import type { ApiCall } from '../../../testing/api-client.js';
import { createdId, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';

describeEachStore('DELETE /api/sources/bulk and /api/destinations/bulk', (target) => {
  let h: ApiHarness;
  let counter = 0;

  before(async function () {
    h = await startApiHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  async function create(kind: 'sources' | 'destinations', api: ApiCall = h.api): Promise<string> {
    counter += 1;
    const body = kind === 'sources' ? { name: `S${counter}`, slug: `s-${counter}` } : { name: `D${counter}`, url: `https://example.test/${counter}` };
    return createdId(api, `/api/${kind}`, body);
  }

  const route = (sourceId: string, destinationId: string) => createdId(h.api, '/api/routes', { sourceId, destinationId });

  const exists = async (kind: string, id: string, api: ApiCall = h.api) => (await api('GET', `/api/${kind}/${id}`)).status === 200;

  for (const kind of ['sources', 'destinations'] as const) {
    describe(kind, () => {
      it('deletes the listed resources and answers 200 {success, deleted}, counting a repeated id once', async () => {
        const [a, b, keep] = [await create(kind), await create(kind), await create(kind)];
        const response = await h.api('DELETE', `/api/${kind}/bulk`, { body: { ids: [a, b, a] } });
        expect(response.status, response.text).to.equal(200);
        expect(response.body).to.deep.equal({ success: true, deleted: 2 });
        expect(await exists(kind, a)).to.equal(false);
        expect(await exists(kind, b)).to.equal(false);
        expect(await exists(kind, keep)).to.equal(true);
      });

      it('answers 404 naming ids of another organization or no one, and deletes nothing', async () => {
        const mine = await create(kind);
        const theirs = await create(kind, h.apiB);
        const response = await h.api('DELETE', `/api/${kind}/bulk`, { body: { ids: [mine, theirs, 'xyz_unknown'] } });
        expect(response.status).to.equal(404);
        expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
        expect(response.body.message).to.include(theirs).and.include('xyz_unknown').and.not.include(mine);
        expect(await exists(kind, mine)).to.equal(true);
        expect(await exists(kind, theirs, h.apiB)).to.equal(true);
      });

      const badBodies: [string, unknown][] = [
        ['no body', undefined],
        ['ids missing', {}],
        ['ids not an array', { ids: 'a,b' }],
        ['an id that is not a string', { ids: ['src_a', 42] }],
        ['an empty list', { ids: [] }],
        ['1001 ids', { ids: Array.from({ length: 1001 }, (_, i) => `id_${i}`) }],
        ['an unknown field', { ids: ['a'], force: true }],
      ];
      for (const [what, body] of badBodies) {
        it(`answers 400 VALIDATION_ERROR for ${what} and deletes nothing`, async () => {
          const id = await create(kind);
          const response = await h.api('DELETE', `/api/${kind}/bulk`, body === undefined ? {} : { body });
          expect(response.status, response.text).to.equal(400);
          expect(response.body.code).to.equal('VALIDATION_ERROR');
          expect(await exists(kind, id)).to.equal(true);
        });
      }
    });
  }

  it('deleting destinations removes their routes; the sources stay', async () => {
    const [source, gone, stays] = [await create('sources'), await create('destinations'), await create('destinations')];
    const [goneRoute, keptRoute] = [await route(source, gone), await route(source, stays)];
    const response = await h.api('DELETE', '/api/destinations/bulk', { body: { ids: [gone] } });
    expect(response.body).to.deep.equal({ success: true, deleted: 1 });
    expect((await h.api('GET', `/api/routes/${goneRoute}`)).status).to.equal(404);
    expect((await h.api('GET', `/api/routes/${keptRoute}`)).status).to.equal(200);
    expect(await exists('sources', source)).to.equal(true);
  });

  it('deleting sources removes their routes; the destinations stay', async () => {
    const [source, destination] = [await create('sources'), await create('destinations')];
    const routeId = await route(source, destination);
    const response = await h.api('DELETE', '/api/sources/bulk', { body: { ids: [source] } });
    expect(response.body).to.deep.equal({ success: true, deleted: 1 });
    expect((await h.api('GET', `/api/routes/${routeId}`)).status).to.equal(404);
    expect(await exists('destinations', destination)).to.equal(true);
  });

  it('`bulk` is not taken for an id: DELETE /api/sources/bulk never answers "source bulk not found"', async () => {
    const response = await h.api('DELETE', '/api/sources/bulk', { body: { ids: ['src_missing'] } });
    expect(response.status).to.equal(404);
    expect(response.body.message).to.include('src_missing');
  });
});
