import { expect } from 'chai';
import { Readable } from 'node:stream';
import type { ApiCall } from '../../testing/api-client.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { expectNothingPublished, expectRefused, startIngestHarness, type IngestHarness } from '../../testing/ingest-harness.js';
import { abortUpload, sendRawHttp } from '../../libs/testing/raw-http-client.js';

const FREE_PAYLOAD_LIMIT = 256 * 1024;
const FREE_REQUESTS_PER_SECOND = 10;
const JSON_TYPE = { 'content-type': 'application/json' };

let counter = 0;
const uniqueBody = () => JSON.stringify({ n: `${Date.now()}-${++counter}` });

/** A body of exactly `size` bytes whose content is unique (no identical-payload duplicate). */
function bodyOfSize(size: number): Buffer {
  const body = Buffer.alloc(size, 'a');
  body.write(`${Date.now()}-${++counter}`);
  return body;
}

/** Streams the body in chunks with no Content-Length: the request goes out chunked. */
const chunked = (body: Buffer) => Readable.from([body.subarray(0, 1000), body.subarray(1000, 100_000), body.subarray(100_000)]);

describeEachStore('Ingest refusals', (target) => {
  let h: IngestHarness;
  /** The gateway's clock: the wall clock, or held still inside one rate window while a test needs it. */
  let heldAt: number | undefined;

  before(async function () {
    h = await startIngestHarness(this, target, { gatewayClock: () => heldAt ?? Date.now() });
  });

  afterEach(() => {
    heldAt = undefined;
  });

  after(async () => {
    await h?.stop();
  });

  const post = (path: string, headers: Record<string, string> = {}) =>
    h.ingest(path, { rawBody: uniqueBody(), headers: { ...JSON_TYPE, ...headers } });

  describe('unknown organization or source', () => {
    it('answers 404 SOURCE_NOT_FOUND and publishes nothing', async () => {
      const existing = await h.createUniqueSource();
      for (const path of ['/ingest/no-such-org/' + existing.slug, '/ingest/org-a/no-such-source', '/ingest/org-b/' + existing.slug]) {
        expectRefused(await expectNothingPublished(h, () => post(path)), 404, 'SOURCE_NOT_FOUND');
      }
    });

    it('accepts at once a source created after its URL answered 404 (the miss was cached)', async () => {
      const slug = 'late-source';
      expectRefused(await post(`/ingest/org-a/${slug}`), 404, 'SOURCE_NOT_FOUND');
      await h.createSource({ name: 'Late', slug });
      expect((await post(`/ingest/org-a/${slug}`)).status).to.equal(200);
    });

    it('answers 404 SOURCE_NOT_FOUND for a source deleted after it was cached', async () => {
      const source = await h.createUniqueSource();
      expect((await post(source.path)).status).to.equal(200);
      expect((await h.api.api('DELETE', `/api/sources/${source.id}`)).status).to.equal(204);
      expectRefused(await expectNothingPublished(h, () => post(source.path)), 404, 'SOURCE_NOT_FOUND');
    });
  });

  describe('disabled source', () => {
    it('answers 403 SOURCE_DISABLED on the next request after PATCH enabled=false, and accepts again after enabled=true', async () => {
      const source = await h.createUniqueSource();
      expect((await post(source.path)).status).to.equal(200);
      expect((await h.api.api('PATCH', `/api/sources/${source.id}`, { body: { enabled: false } })).status).to.equal(200);
      expectRefused(await expectNothingPublished(h, () => post(source.path)), 403, 'SOURCE_DISABLED');
      expect((await h.api.api('PATCH', `/api/sources/${source.id}`, { body: { enabled: true } })).status).to.equal(200);
      expect((await post(source.path)).status).to.equal(200);
    });

    it('answers 403 SOURCE_DISABLED for a source created disabled', async () => {
      const source = await h.createUniqueSource({ enabled: false });
      expectRefused(await expectNothingPublished(h, () => post(source.path)), 403, 'SOURCE_DISABLED');
      expect(await h.events(source.id)).to.have.length(0);
    });
  });

  describe('IP filter (the client here is 127.0.0.1, no proxy trusted)', () => {
    const cases: Array<{ title: string; settings: Record<string, unknown>; allowed: boolean }> = [
      { title: 'an allowlist naming the address', settings: { ipFilterMode: 'allowlist', ipAllowlist: ['192.0.2.1', '127.0.0.1'] }, allowed: true },
      { title: 'an allowlist with a CIDR containing it', settings: { ipFilterMode: 'allowlist', ipAllowlist: ['127.0.0.0/8'] }, allowed: true },
      { title: 'an allowlist of other IPv4 and IPv6 ranges', settings: { ipFilterMode: 'allowlist', ipAllowlist: ['10.0.0.0/8', '::1', '2001:db8::/32'] }, allowed: false },
      { title: 'a denylist naming the address', settings: { ipFilterMode: 'denylist', ipDenylist: ['127.0.0.1'] }, allowed: false },
      { title: 'a denylist with a CIDR containing it', settings: { ipFilterMode: 'denylist', ipDenylist: ['127.0.0.0/24'] }, allowed: false },
      { title: 'a denylist naming the address IPv4-mapped', settings: { ipFilterMode: 'denylist', ipDenylist: ['::ffff:127.0.0.1'] }, allowed: false },
      { title: 'a denylist with an IPv4-mapped CIDR containing it', settings: { ipFilterMode: 'denylist', ipDenylist: ['::ffff:127.0.0.0/120'] }, allowed: false },
      { title: 'an allowlist naming the address IPv4-mapped', settings: { ipFilterMode: 'allowlist', ipAllowlist: ['::ffff:127.0.0.1'] }, allowed: true },
      { title: 'a denylist of other ranges', settings: { ipFilterMode: 'denylist', ipDenylist: ['10.0.0.0/8', '2001:db8::/32'] }, allowed: true },
    ];
    for (const { title, settings, allowed } of cases) {
      it(`${allowed ? 'accepts' : 'refuses with 403 IP_NOT_ALLOWED'} under ${title}`, async () => {
        const source = await h.createUniqueSource(settings);
        if (allowed) {
          expect((await post(source.path)).status).to.equal(200);
        } else {
          expectRefused(await expectNothingPublished(h, () => post(source.path)), 403, 'IP_NOT_ALLOWED');
        }
      });
    }

    it('ignores X-Forwarded-For when no proxy is trusted: a forged allowed address does not pass', async () => {
      const source = await h.createUniqueSource({ ipFilterMode: 'allowlist', ipAllowlist: ['203.0.113.7'] });
      expectRefused(await expectNothingPublished(h, () => post(source.path, { 'X-Forwarded-For': '203.0.113.7' })), 403, 'IP_NOT_ALLOWED');
    });

    it('ignores X-Forwarded-For when no proxy is trusted: a forged other address does not escape a denylist', async () => {
      const source = await h.createUniqueSource({ ipFilterMode: 'denylist', ipDenylist: ['127.0.0.1'] });
      expectRefused(await expectNothingPublished(h, () => post(source.path, { 'X-Forwarded-For': '198.51.100.1' })), 403, 'IP_NOT_ALLOWED');
    });

    it('applies a filter changed by PATCH on the next request', async () => {
      const source = await h.createUniqueSource();
      expect((await post(source.path)).status).to.equal(200);
      const patched = await h.api.api('PATCH', `/api/sources/${source.id}`, { body: { ipFilterMode: 'denylist', ipDenylist: ['127.0.0.1'] } });
      expect(patched.status, patched.text).to.equal(200);
      expectRefused(await post(source.path), 403, 'IP_NOT_ALLOWED');
    });
  });

  describe('payload size on plan free (256 KiB)', () => {
    let free: ApiCall;

    before(async () => {
      free = await h.createOrganization('org-free', 'free');
    });

    async function freeSource() {
      return h.createUniqueSource({}, free, 'org-free');
    }

    it('accepts a body of exactly the limit sent with Content-Length, stored byte-exact', async () => {
      const source = await freeSource();
      const body = bodyOfSize(FREE_PAYLOAD_LIMIT);
      const response = await h.ingest(source.path, { rawBody: body, headers: { 'content-type': 'application/octet-stream' } });
      expect(response.status, response.text).to.equal(200);
      const [stored] = await h.events(source.id);
      expect(stored!.payload.equals(body)).to.equal(true);
    });

    it('refuses one byte over the limit sent with Content-Length: 413 PAYLOAD_TOO_LARGE naming the limit', async () => {
      const source = await freeSource();
      const response = await expectNothingPublished(h, () =>
        h.ingest(source.path, { rawBody: bodyOfSize(FREE_PAYLOAD_LIMIT + 1), headers: { 'content-type': 'application/octet-stream' } }),
      );
      expectRefused(response, 413, 'PAYLOAD_TOO_LARGE');
      expect(response.body.message).to.include(String(FREE_PAYLOAD_LIMIT));
    });

    it('accepts a chunked body (no Content-Length) of exactly the limit', async () => {
      const source = await freeSource();
      const body = bodyOfSize(FREE_PAYLOAD_LIMIT);
      const response = await h.ingest(source.path, { rawBody: chunked(body) as never, headers: { 'content-type': 'application/octet-stream' } });
      expect(response.status, response.text).to.equal(200);
      const [stored] = await h.events(source.id);
      expect(stored!.payload.equals(body)).to.equal(true);
    });

    it('refuses a chunked body (no Content-Length) one byte over the limit: 413 PAYLOAD_TOO_LARGE naming the limit', async () => {
      const source = await freeSource();
      const response = await expectNothingPublished(h, () =>
        h.ingest(source.path, { rawBody: chunked(bodyOfSize(FREE_PAYLOAD_LIMIT + 1)) as never, headers: { 'content-type': 'application/octet-stream' } }),
      );
      expectRefused(response, 413, 'PAYLOAD_TOO_LARGE');
      expect(response.body.message).to.include(String(FREE_PAYLOAD_LIMIT));
    });

    it('refuses a declared Content-Length over the limit before the body is sent', async () => {
      const source = await freeSource();
      const head = `POST ${source.path} HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`;
      const response = await sendRawHttp(h.api.relay.port, head);
      expect(response.status).to.equal(413);
      expect(JSON.parse(response.body)).to.include({ code: 'PAYLOAD_TOO_LARGE' });
    });
  });

  describe('rate limits', () => {
    /** Holds the gateway's clock inside the next window of `windowMs`, so a burst falls into one window however long it takes. */
    function holdInNextWindow(windowMs: number) {
      heldAt = (Math.floor(Date.now() / windowMs) + 1) * windowMs + 100;
    }

    it(`on plan free, accepts ${FREE_REQUESTS_PER_SECOND} requests per second per source and answers 429 RATE_LIMITED with retryAfter and Retry-After beyond`, async () => {
      const free = await h.createOrganization('org-free-rate', 'free');
      const source = await h.createUniqueSource({}, free, 'org-free-rate');
      const other = await h.createUniqueSource({}, free, 'org-free-rate');
      holdInNextWindow(1000);
      const before = await h.publishedCount();
      const responses = await Promise.all(Array.from({ length: FREE_REQUESTS_PER_SECOND + 5 }, () => post(source.path)));
      expect(responses.filter((r) => r.status === 200)).to.have.length(FREE_REQUESTS_PER_SECOND);
      const limited = responses.filter((r) => r.status === 429);
      expect(limited).to.have.length(5);
      for (const response of limited) {
        expectRefused(response, 429, 'RATE_LIMITED');
        expect(response.body.retryAfter).to.equal(1);
        expect(response.headers['retry-after']).to.equal('1');
      }
      expect(await h.publishedCount()).to.equal(before + FREE_REQUESTS_PER_SECOND);
      // The limit is per source: another source of the same organization is not affected.
      expect((await post(other.path)).status).to.equal(200);
    });

    it("applies the source's rateLimitPerMinute on top of the plan", async () => {
      const source = await h.createUniqueSource({ rateLimitPerMinute: 3 });
      holdInNextWindow(60_000);
      for (let i = 0; i < 3; i++) expect((await post(source.path)).status).to.equal(200);
      const response = await expectNothingPublished(h, () => post(source.path));
      expectRefused(response, 429, 'RATE_LIMITED');
      const retryAfter = Number(response.body.retryAfter);
      expect(retryAfter).to.be.within(1, 60);
      expect(response.headers['retry-after']).to.equal(String(retryAfter));
    });
  });

  describe('broken HTTP', () => {
    it('survives an upload aborted mid-body: no event, and the server still serves', async () => {
      const source = await h.createUniqueSource();
      const before = await h.publishedCount();
      const head = `POST ${source.path} HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n`;
      await abortUpload(h.api.relay.port, head, Buffer.from('{"partial": "'));
      expect((await post(source.path)).status).to.equal(200);
      expect(await h.publishedCount()).to.equal(before + 1);
      expect(await h.events(source.id)).to.have.length(1);
    });

    it('survives a connection closed right after the headers', async () => {
      const source = await h.createUniqueSource();
      const before = await h.publishedCount();
      await abortUpload(h.api.relay.port, `POST ${source.path} HTTP/1.1\r\nHost: relay\r\nTransfer-Encoding: chunked\r\n\r\n`, Buffer.from('5\r\nab'));
      expect((await post(source.path)).status).to.equal(200);
      expect(await h.publishedCount()).to.equal(before + 1);
    });

    it('answers a 20 KB header section with 431 in the JSON envelope, and keeps serving', async () => {
      const source = await h.createUniqueSource();
      const flood = Array.from({ length: 20 }, (_, i) => `X-Flood-${i}: ${'x'.repeat(1000)}\r\n`).join('');
      const response = await sendRawHttp(h.api.relay.port, `POST ${source.path} HTTP/1.1\r\nHost: relay\r\n${flood}Content-Length: 2\r\n\r\n{}`);
      expect(response.status).to.equal(431);
      expect(response.headers['content-type']).to.include('application/json');
      const body = JSON.parse(response.body);
      expect(body).to.include({ code: 'HEADERS_TOO_LARGE' });
      expect(body.error).to.be.a('string');
      expect(body.message).to.be.a('string');
      expect((await post(source.path)).status).to.equal(200);
    });

    it('answers a method HTTP parsers do not know (FOO) with 405 in the JSON envelope', async () => {
      const source = await h.createUniqueSource();
      const response = await sendRawHttp(h.api.relay.port, `FOO ${source.path} HTTP/1.1\r\nHost: relay\r\nContent-Length: 2\r\n\r\n{}`);
      expect(response.status).to.equal(405);
      expect(JSON.parse(response.body)).to.include({ code: 'METHOD_NOT_ALLOWED', error: 'Method Not Allowed' });
    });

    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'PROPFIND']) {
      it(`answers ${method} with 405 METHOD_NOT_ALLOWED`, async () => {
        const source = await h.createUniqueSource();
        const response = await expectNothingPublished(h, () => h.ingest(source.path, { method, ...(method === 'GET' || method === 'DELETE' ? {} : { rawBody: uniqueBody() }) }));
        expectRefused(response, 405, 'METHOD_NOT_ALLOWED');
      });
    }
  });
});
