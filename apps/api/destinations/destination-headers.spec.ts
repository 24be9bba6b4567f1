import { expect } from 'chai';
import { request } from 'undici';
import { startHttpSink, type HttpSink } from '../../../libs/testing/http-sink.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { created, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createRoute, createSource } from '../../../testing/event-fixtures.js';

const TOKEN = 'hdr-token-value-0001';
const SHORT = 'team-7';
const REDACTED = '***REDACTED***';

/** Issue 53 (#7): a destination's header values are secrets, sealed at rest and shown masked. */
describeEachStore('destination header values are secrets', (target) => {
  let h: ApiHarness;
  let sink: HttpSink;

  before(async function () {
    h = await startApiHarness(this, target, { role: 'all' });
    sink = await startHttpSink();
  });

  after(async () => {
    await sink?.close();
    await h?.stop();
  });

  const create = (slug: string, headers: Record<string, string>, url = 'https://hooks.example.test/in'): Promise<{ id: string; headers: Record<string, string> }> =>
    created(h.api, '/api/destinations', { name: slug, slug, url, headers });
  const view = async (id: string) => (await h.api('GET', `/api/destinations/${id}`)).body;
  /** The headers an admin's includeSensitive export shows: what is really stored. */
  const storedHeaders = async (id: string) => {
    const slug = (await view(id)).slug;
    const exported = await h.api('GET', `/api/destinations/export?includeSensitive=true&ids=${id}`);
    expect(exported.status, exported.text).to.equal(200);
    return exported.body.destinations.find((entry: { slug: string }) => entry.slug === slug).headers;
  };

  it('are sealed at rest: the row holds no value in clear, and its sealed map opens to the values sent', async () => {
    const { id } = await create('sealed', { 'X-Token': TOKEN, 'X-Team': SHORT });
    const row = (await h.rawRow('destinations', id))!;
    expect(JSON.stringify(row)).not.to.include(TOKEN).and.not.to.include(SHORT);
    expect(JSON.parse(h.unseal(String(row.headers_sealed)))).to.deep.equal({ 'X-Token': TOKEN, 'X-Team': SHORT });
  });

  it('are masked in every view: **** and the last 4 characters, only **** for 8 characters or fewer', async () => {
    const destination = await create('masked', { 'X-Token': TOKEN, 'X-Team': SHORT });
    const expected = { 'X-Token': '****0001', 'X-Team': '****' };
    expect(destination.headers).to.deep.equal(expected);
    expect((await view(destination.id)).headers).to.deep.equal(expected);
    const patched = await h.api('PATCH', `/api/destinations/${destination.id}`, { body: { description: 'touched' } });
    expect(patched.body.headers).to.deep.equal(expected);
  });

  it('are redacted in exports without includeSensitive and in clear in an admin includeSensitive export', async () => {
    const { id } = await create('exported', { 'X-Token': TOKEN });
    const redacted = await h.api('GET', `/api/destinations/export?ids=${id}`);
    expect(redacted.body.destinations[0].headers).to.deep.equal({ 'X-Token': REDACTED });
    expect(redacted.text).not.to.include(TOKEN);
    expect(await storedHeaders(id)).to.deep.equal({ 'X-Token': TOKEN });
  });

  it('a PATCH that sends the masked values back keeps the stored ones, beside a changed value', async () => {
    const { id } = await create('patched', { 'X-Token': TOKEN, 'X-Team': SHORT });
    const fetched = await view(id);
    const response = await h.api('PATCH', `/api/destinations/${id}`, { body: { headers: { ...fetched.headers, 'X-Extra': 'extra-value-42' } } });
    expect(response.status, response.text).to.equal(200);
    expect(await storedHeaders(id)).to.deep.equal({ 'X-Token': TOKEN, 'X-Team': SHORT, 'X-Extra': 'extra-value-42' });
    const redactedBack = await h.api('PATCH', `/api/destinations/${id}`, { body: { headers: { 'X-Token': REDACTED } } });
    expect(redactedBack.status, redactedBack.text).to.equal(200);
    expect(await storedHeaders(id)).to.deep.equal({ 'X-Token': TOKEN });
  });

  it('a masked value with no stored value of that name is 400 VALIDATION_ERROR naming the header, and nothing changes', async () => {
    const { id } = await create('unknown-mask', { 'X-Token': TOKEN });
    const response = await h.api('PATCH', `/api/destinations/${id}`, { body: { headers: { 'X-Token': '****0001', 'X-Other': '****abcd' } } });
    expect(response.status, response.text).to.equal(400);
    expect(response.body.code).to.equal('VALIDATION_ERROR');
    expect(response.body.details.map((d: { field: string }) => d.field)).to.deep.equal(['headers.X-Other']);
    expect(await storedHeaders(id)).to.deep.equal({ 'X-Token': TOKEN });
    const createdMasked = await h.api('POST', '/api/destinations', { body: { name: 'New', url: 'https://hooks.example.test/new', headers: { 'X-Token': '****' } } });
    expect(createdMasked.status, createdMasked.text).to.equal(400);
  });

  it('an import that sends redacted values back keeps the stored ones on overwrite; a created one without them is disabled, with a warning', async () => {
    const { id } = await create('imported', { 'X-Token': TOKEN });
    const exported = (await h.api('GET', `/api/destinations/export?ids=${id}`)).body;
    const overwrite = await h.api('POST', '/api/destinations/import', { body: { ...exported, conflictStrategy: 'overwrite' } });
    expect(overwrite.status, overwrite.text).to.equal(200);
    expect(overwrite.body.summary.overwritten).to.equal(1);
    expect(await storedHeaders(id)).to.deep.equal({ 'X-Token': TOKEN });

    const entry = { ...exported.destinations[0], slug: 'imported-copy', name: 'Imported copy' };
    const copy = await h.api('POST', '/api/destinations/import', { body: { destinations: [entry], conflictStrategy: 'skip' } });
    expect(copy.status, copy.text).to.equal(200);
    expect(copy.body.results[0].warnings.join(' ')).to.include('X-Token');
    const listed = await h.api('GET', '/api/destinations/export?includeSensitive=true');
    const imported = listed.body.destinations.find((d: { slug: string }) => d.slug === 'imported-copy');
    expect(imported).to.include({ isActive: false });
    expect(imported.headers).to.deep.equal({});
  });

  it('rows stored with plain headers before still work, and are sealed at the next start', async function () {
    this.timeout(60_000);
    const { id } = await create('legacy', {});
    const legacy = { 'X-Legacy': 'legacy-value-0001' };
    await h.relay.store.sql.run('UPDATE destinations SET headers = ?, headers_sealed = NULL WHERE id = ?', [JSON.stringify(legacy), id]);
    expect((await view(id)).headers).to.deep.equal({ 'X-Legacy': '****0001' });
    expect(await storedHeaders(id)).to.deep.equal(legacy);

    await h.restart();

    const row = (await h.rawRow('destinations', id))!;
    expect(JSON.stringify(row)).not.to.include('legacy-value-0001');
    expect(JSON.parse(h.unseal(String(row.headers_sealed)))).to.deep.equal(legacy);
    expect(await storedHeaders(id)).to.deep.equal(legacy);
  });

  it('deliveries carry the real values', async () => {
    const destination = await create('delivered', { 'X-Token': TOKEN, 'X-Team': SHORT }, `${sink.url}/in`);
    const source = await createSource(h, { name: 'Headers', slug: 'headers-source' });
    await createRoute(h, source.id, destination.id);
    const answer = await request(`${h.url}/ingest/org-a/${source.slug}`, { method: 'POST', body: '{"n":1}', headers: { 'content-type': 'application/json' } });
    expect(answer.statusCode).to.equal(200);
    await answer.body.dump();
    const [delivered] = await sink.waitForRequests(1, 15_000);
    expect(delivered!.headers).to.include({ 'x-token': TOKEN, 'x-team': SHORT });
  });
});
