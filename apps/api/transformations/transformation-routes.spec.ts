import { expect } from 'chai';
import { created, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';

const CODE = 'function transform(request, context) {\n  request.body.token = context.env.TOKEN;\n  return request;\n}';
const SAMPLE = { body: { type: 'order.created' }, headers: { 'content-type': 'application/json' }, query: {}, path: '/' };

describeEachStore('Transformations API', (target) => {
  let h: ApiHarness;
  let names = 0;

  before(async function () {
    h = await startApiHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  const newTransformation = (extra: Record<string, unknown> = {}) => created(h.api, '/api/transformations', { name: `Tag ${(names += 1)}`, code: CODE, ...extra });

  it('creates, lists, reads, changes and deletes a transformation, its env masked and sealed', async () => {
    const made = await newTransformation({ env: { TOKEN: 'tok_live_abcdefgh1234', SHORT: 'abc' } });
    expect(made.id).to.match(/^trs_[0-9a-z]{26}$/);
    expect(Object.keys(made)).to.have.members(['id', 'name', 'code', 'env', 'createdAt', 'updatedAt']);
    expect(made.env).to.deep.equal({ TOKEN: '****1234', SHORT: '****' });
    const stored = (await h.relay.store.sql.all<{ env: string }>('SELECT env FROM transformations WHERE id = ?', [made.id]))[0]!;
    expect(stored.env).not.to.include('tok_live');
    expect(JSON.parse(h.unseal(stored.env))).to.deep.equal({ TOKEN: 'tok_live_abcdefgh1234', SHORT: 'abc' });

    const list = await h.api('GET', '/api/transformations');
    expect(list.body.data.map((row: { id: string }) => row.id)).to.include(made.id);
    expect((await h.api('GET', `/api/transformations/${made.id}`)).body).to.deep.equal(made);

    // The fetched env sent back keeps the stored values.
    const patched = await h.api('PATCH', `/api/transformations/${made.id}`, { body: { env: made.env, name: `${made.name} renamed` } });
    expect(patched.status).to.equal(200);
    expect(JSON.parse(h.unseal((await h.relay.store.sql.all<{ env: string }>('SELECT env FROM transformations WHERE id = ?', [made.id]))[0]!.env))).to.deep.equal({ TOKEN: 'tok_live_abcdefgh1234', SHORT: 'abc' });

    expect((await h.api('DELETE', `/api/transformations/${made.id}`)).status).to.equal(204);
    expect((await h.api('GET', `/api/transformations/${made.id}`)).status).to.equal(404);
  });

  it('answers 400 VALIDATION_ERROR for code that does not compile, defines no transform, or is over 64 KB', async () => {
    for (const code of ['function transform( {', 'function other() {}', `function transform(r) { return r; }\n//${'x'.repeat(64 * 1024)}`]) {
      const response = await h.api('POST', '/api/transformations', { body: { name: 'Broken', code } });
      expect(response.status, code.slice(0, 30)).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    }
  });

  it('answers 400 for more than 32 env values', async () => {
    const env = Object.fromEntries(Array.from({ length: 33 }, (_, index) => [`K${index}`, 'v']));
    expect((await h.api('POST', '/api/transformations', { body: { name: 'Many', code: CODE, env } })).status).to.equal(400);
  });

  it('answers 409 DUPLICATE_NAME for a name taken in the organization, not for another organization', async () => {
    const made = await newTransformation();
    const again = await h.api('POST', '/api/transformations', { body: { name: made.name, code: CODE } });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('DUPLICATE_NAME');
    expect((await h.apiB('POST', '/api/transformations', { body: { name: made.name, code: CODE } })).status).to.equal(201);
  });

  it("answers 404 for another organization's transformation", async () => {
    const made = await newTransformation();
    expect((await h.apiB('GET', `/api/transformations/${made.id}`)).status).to.equal(404);
    expect((await h.apiB('DELETE', `/api/transformations/${made.id}`)).status).to.equal(404);
  });

  it('lets a route carry a transformation and a delay, refuses one of another organization, and refuses deleting one in use with 409 IN_USE', async () => {
    const made = await newTransformation();
    const source = await created(h.api, '/api/sources', { name: 'Transformed', slug: `transformed-${names}` });
    const destination = await created(h.api, '/api/destinations', { name: 'Transformed', url: 'https://transformed.example.com' });
    const route = await created(h.api, '/api/routes', { sourceId: source.id, destinationId: destination.id, transformationId: made.id, delaySeconds: 90 });
    expect(route).to.include({ transformationId: made.id, delaySeconds: 90 });

    const foreign = await created(h.apiB, '/api/transformations', { name: `Foreign ${names}`, code: CODE });
    expect((await h.api('PATCH', `/api/routes/${route.id}`, { body: { transformationId: foreign.id } })).status).to.equal(404);
    expect((await h.api('PATCH', `/api/routes/${route.id}`, { body: { delaySeconds: 86_401 } })).status).to.equal(400);

    const inUse = await h.api('DELETE', `/api/transformations/${made.id}`);
    expect(inUse.status).to.equal(409);
    expect(inUse.body.code).to.equal('IN_USE');
    expect((await h.api('PATCH', `/api/routes/${route.id}`, { body: { transformationId: null } })).body.transformationId).to.equal(null);
    expect((await h.api('DELETE', `/api/transformations/${made.id}`)).status).to.equal(204);
  });

  describe('POST /api/transformations/test', () => {
    it('answers the result and the console lines for a sample', async () => {
      const response = await h.api('POST', '/api/transformations/test', {
        body: { code: 'function transform(r, c) { console.log("seen", c.env.TOKEN); r.headers["x-tag"] = "1"; return r; }', sample: SAMPLE, env: { TOKEN: 't' } },
      });
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.include({ result: { ...SAMPLE, headers: { ...SAMPLE.headers, 'x-tag': '1' } }, logs: ['seen t'], error: null });
      expect(response.body.durationMs).to.be.a('number');
    });

    it('answers 200 with the error when the code fails', async () => {
      const response = await h.api('POST', '/api/transformations/test', { body: { code: 'function transform() { for (;;) {} }', sample: SAMPLE } });
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.include({ result: null, error: { name: 'TimeoutError', message: 'The transformation ran longer than 100 ms' } });
    });

    it("runs with a stored transformation's env when given its id: masked values sent back are the stored ones, new ones as sent", async () => {
      const made = await newTransformation({ env: { TOKEN: 'tok_live_abcdefgh1234' } });
      const code = 'function transform(r, c) { console.log(c.env.TOKEN, c.env.EXTRA); return r; }';
      const run = async (extra: Record<string, unknown>) => (await h.api('POST', '/api/transformations/test', { body: { code, sample: SAMPLE, transformationId: made.id, ...extra } })).body.logs;
      expect(await run({})).to.deep.equal(['tok_live_abcdefgh1234 undefined']);
      expect(await run({ env: { ...made.env, EXTRA: 'x' } })).to.deep.equal(['tok_live_abcdefgh1234 x']);
      expect(await run({ env: { TOKEN: 'typed' } })).to.deep.equal(['typed undefined']);
      const foreign = await created(h.apiB, '/api/transformations', { name: `Foreign env ${names}`, code: CODE });
      expect((await h.api('POST', '/api/transformations/test', { body: { code, sample: SAMPLE, transformationId: foreign.id } })).status).to.equal(404);
    });

    it("answers 404 for another organization's event and 400 without eventId or sample", async () => {
      expect((await h.api('POST', '/api/transformations/test', { body: { code: CODE, eventId: 'evt_00000000000000000000000000' } })).status).to.equal(404);
      expect((await h.api('POST', '/api/transformations/test', { body: { code: CODE } })).status).to.equal(400);
    });
  });
});
