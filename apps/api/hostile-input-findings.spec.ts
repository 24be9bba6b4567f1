import http from 'node:http';
import { expect } from 'chai';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { created, startApiHarness, type ApiHarness } from '../../testing/api-harness.js';

/** A request node:http sends as given (undici refuses some headers, such as Expect). */
function rawRequest(url: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; contentType: string; body: any }>((resolve, reject) => {
    const target = new URL(url);
    const request = http.request({ host: target.hostname, port: target.port, method, path, headers }, (answer) => {
      let text = '';
      answer.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, contentType: String(answer.headers['content-type']), body: JSON.parse(text) }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** What the hostile-input run (apps/relay/hostile-input.spec.ts) found; each answered 500, or outside the envelope, before. */
describeEachStore('Hostile input found by the fuzz run', (target) => {
  let h: ApiHarness;
  let sourceId: string;

  before(async function () {
    h = await startApiHarness(this, target);
    sourceId = (await created(h.api, '/api/sources', { name: 'Kept', slug: 'kept' })).id;
  });

  after(async () => {
    await h?.stop();
  });

  const sourceCount = async () => (await h.api('GET', '/api/sources')).body.pagination.total as number;

  describe('paths in another letter case', () => {
    for (const path of ['/API/SOURCES', '/Api/sources', '/api/SOURCES']) {
      it(`${path} is 404 NOT_FOUND with or without a key: routes match case-sensitively, as authentication does`, async () => {
        for (const key of [undefined, null]) {
          const response = await h.api('GET', key === null ? path : `${path}/${sourceId.toUpperCase()}`, key === null ? { key: null } : {});
          expect(response.status, response.text).to.equal(404);
          expect(response.body.code).to.equal('NOT_FOUND');
        }
      });
    }

    it('a mixed-case DELETE without a key deletes nothing', async () => {
      const response = await h.api('DELETE', `/API/sources/${sourceId}`, { key: null });
      expect(response.status).to.equal(404);
      expect((await h.api('GET', `/api/sources/${sourceId}`)).status).to.equal(200);
    });
  });

  describe('NUL characters', () => {
    for (const path of ['/api/sources/%00', '/api/sources/src_%00x', '/api/events/a%00b/timeline', '/ingest/org-a/kept%00']) {
      it(`${path} is 400 INVALID_PATH`, async () => {
        const response = await h.api(path.startsWith('/ingest') ? 'POST' : 'GET', path, { rawBody: '{}', headers: { 'content-type': 'application/json' } });
        expect(response.status, response.text).to.equal(400);
        expect(response.body.code).to.equal('INVALID_PATH');
      });
    }

    it('a query value with %00 is 400 VALIDATION_ERROR', async () => {
      const response = await h.api('GET', '/api/destinations?search=a%00b');
      expect(response.status, response.text).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    });

    it('a JSON body with U+0000 in a string or a key is 400 VALIDATION_ERROR naming the field, and creates nothing', async () => {
      const before = await sourceCount();
      const inValue = await h.api('POST', '/api/sources', { body: { name: 'a\u0000b', slug: 'nul-value' } });
      expect(inValue.status, inValue.text).to.equal(400);
      expect(inValue.body.code).to.equal('VALIDATION_ERROR');
      expect(inValue.body.details).to.deep.include({ field: 'name', message: 'may not contain NUL characters (\\u0000)' });
      const inKey = await h.api('PATCH', `/api/sources/${sourceId}`, { rawBody: '{"description":"x","ma\\u0000sk":1}', headers: { 'content-type': 'application/json' } });
      expect(inKey.status, inKey.text).to.equal(400);
      expect(inKey.body.details.map((d: { field: string }) => d.field)).to.include('ma\u0000sk');
      expect(await sourceCount()).to.equal(before);
      expect((await h.api('GET', `/api/sources/${sourceId}`)).body.description).to.equal(null);
    });
  });

  it('an Expect other than 100-continue is 417 in the error envelope', async () => {
    const response = await rawRequest(h.url, 'POST', '/api/sources', { expect: 'something-else', 'content-type': 'application/json', authorization: `Bearer ${h.keyA}` }, '{}');
    expect(response.status).to.equal(417);
    expect(response.contentType).to.include('application/json');
    expect(response.body).to.deep.equal({ error: 'Expectation Failed', message: 'The HTTP request was rejected: expectation failed', code: 'EXPECTATION_FAILED' });
  });
});
