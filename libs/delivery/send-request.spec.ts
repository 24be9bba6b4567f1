import { promises as dns, type LookupAddress } from 'node:dns';
import { expect } from 'chai';
import { hang, resetConnection, respond, stallBody, startHttpSink, type HttpSink } from '../testing/http-sink.js';
import type { DeliveryRequest } from './build-request.js';
import type { ResolveHost } from './guarded-connector.js';
import { createHttpSender, type HttpSender } from './send-request.js';

function post(url: string, body = '{"hello":"world"}'): DeliveryRequest {
  return { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) };
}

/** Names the tests control; every other name goes to the real resolver. */
function hostsTable(table: Record<string, LookupAddress[]>): ResolveHost {
  return async (hostname, options) => table[hostname] ?? dns.lookup(hostname, options);
}

describe('createHttpSender', () => {
  let sink: HttpSink;
  let sender: HttpSender;

  beforeEach(async () => {
    sink = await startHttpSink();
    sender = createHttpSender({
      blockPrivateDestinations: false,
      resolveHost: hostsTable({
        'sink.test': [{ address: '127.0.0.1', family: 4 }],
        'metadata.test': [{ address: '169.254.169.254', family: 4 }],
        'mixed.test': [
          { address: '127.0.0.1', family: 4 },
          { address: '169.254.169.254', family: 4 },
        ],
        'nowhere.test': [],
        'dual.test': [
          { address: '::1', family: 6 },
          { address: '127.0.0.1', family: 4 },
        ],
      }),
    });
  });
  afterEach(async () => {
    await sender.close();
    await sink.close();
  });

  describe('when the destination answers', () => {
    it('a 2xx is an ok outcome with the status, latency, body and recorded headers', async () => {
      sink.setBehaviour([respond(201, { body: '{"received":true}', headers: { 'content-type': 'application/json', 'x-request-id': 'req-1', 'set-cookie': 'a=b' } })]);
      const outcome = await sender.send(post(`${sink.url}/in`), { timeoutMs: 5000 });
      expect(outcome).to.include({ ok: true, statusCode: 201, responseBody: '{"received":true}' });
      expect(outcome.latencyMs).to.be.a('number').and.be.at.least(0);
      expect(outcome.responseHeaders).to.deep.include({ 'content-type': 'application/json', 'x-request-id': 'req-1' });
      expect(outcome.responseHeaders).not.to.have.property('set-cookie');
      expect(outcome.error).to.equal(undefined);
      expect(outcome.errorKind).to.equal(undefined);
    });

    it('a 5xx is a failed http_status outcome that keeps the response body', async () => {
      sink.setBehaviour([respond(500, { body: 'database down' })]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 5000 });
      expect(outcome).to.include({ ok: false, statusCode: 500, errorKind: 'http_status', error: 'HTTP 500', responseBody: 'database down' });
      expect(outcome.retryAfterMs).to.equal(undefined);
    });

    it('a 3xx is not followed and is a failed outcome', async () => {
      sink.setBehaviour((request) => (request.url === '/moved' ? respond(302, { headers: { location: `${sink.url}/new-home` } }) : respond(200)));
      const outcome = await sender.send(post(`${sink.url}/moved`), { timeoutMs: 5000 });
      expect(outcome).to.include({ ok: false, statusCode: 302, errorKind: 'http_status' });
      expect(outcome.responseHeaders.location).to.equal(`${sink.url}/new-home`);
      expect(sink.requests.map((request) => request.url)).to.deep.equal(['/moved']);
    });

    it('a 429 with Retry-After in seconds carries retryAfterMs', async () => {
      sink.setBehaviour([respond(429, { headers: { 'retry-after': '120' } })]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 5000 });
      expect(outcome).to.include({ ok: false, statusCode: 429, retryAfterMs: 120_000 });
      expect(outcome.responseHeaders['retry-after']).to.equal('120');
    });

    it('a 503 with Retry-After as an HTTP date carries the time until that date', async () => {
      const at = new Date(Date.now() + 90_000).toUTCString();
      sink.setBehaviour([respond(503, { headers: { 'retry-after': at } })]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 5000 });
      expect(outcome.statusCode).to.equal(503);
      // HTTP dates have whole seconds: up to 1 s is lost in the format, a little more in transit.
      expect(outcome.retryAfterMs).to.be.within(87_000, 90_000);
    });

    it('ignores Retry-After on other statuses', async () => {
      sink.setBehaviour([respond(500, { headers: { 'retry-after': '30' } })]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 5000 });
      expect(outcome.retryAfterMs).to.equal(undefined);
    });

    it('keeps only the first 10 KB of a large response body', async () => {
      sink.setBehaviour([respond(200, { body: Buffer.alloc(3 * 1024 * 1024, 'x') })]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 10_000 });
      expect(outcome.ok).to.equal(true);
      expect(outcome.responseBody).to.equal('x'.repeat(10 * 1024));
    });

    it('does not cut a multi-byte character in half at the 10 KB limit', async () => {
      sink.setBehaviour([respond(200, { body: `a${'é'.repeat(6000)}` })]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 5000 });
      expect(outcome.responseBody).to.equal(`a${'é'.repeat(5119)}`);
      expect(Buffer.byteLength(outcome.responseBody)).to.be.at.most(10 * 1024);
    });

    it('still delivers on a reused keep-alive connection after a truncated large body', async () => {
      sink.setBehaviour([respond(200, { body: Buffer.alloc(40 * 1024, 'y') }), respond(200, { body: 'second' })]);
      await sender.send(post(sink.url), { timeoutMs: 5000 });
      const second = await sender.send(post(sink.url), { timeoutMs: 5000 });
      expect(second).to.include({ ok: true, responseBody: 'second' });
    });
  });

  describe('when the destination does not answer', () => {
    it('a destination that hangs gives a timeout outcome after timeoutMs', async () => {
      sink.setBehaviour([hang()]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 300 });
      expect(outcome).to.include({ ok: false, statusCode: null, errorKind: 'timeout' });
      expect(outcome.error).to.include('300 ms');
      expect(outcome.latencyMs).to.be.at.least(290);
    });

    it('a body that stops arriving is a timeout too: timeoutMs covers headers and body', async () => {
      sink.setBehaviour([stallBody(200)]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 300 });
      expect(outcome).to.include({ ok: false, statusCode: 200, errorKind: 'timeout' });
    });

    it('an answer slower than timeoutMs is a timeout', async () => {
      sink.setBehaviour([respond(200, { delayMs: 1500 })]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 200 });
      expect(outcome).to.include({ ok: false, statusCode: null, errorKind: 'timeout' });
    });

    it('an answer within timeoutMs after a delay is ok', async () => {
      sink.setBehaviour([respond(204, { delayMs: 100 })]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 3000 });
      expect(outcome).to.include({ ok: true, statusCode: 204 });
      expect(outcome.latencyMs).to.be.at.least(90);
    });

    it('a connection reset gives a reset outcome', async () => {
      sink.setBehaviour([resetConnection()]);
      const outcome = await sender.send(post(sink.url), { timeoutMs: 5000 });
      expect(outcome).to.include({ ok: false, statusCode: null, errorKind: 'reset' });
      expect(sink.requests).to.have.length(1);
    });

    it('a destination that is down gives a connect outcome, and delivery works again once it is back', async () => {
      await sink.goDown();
      const down = await sender.send(post(sink.url), { timeoutMs: 5000 });
      expect(down).to.include({ ok: false, statusCode: null, errorKind: 'connect' });
      expect(down.error).to.include('ECONNREFUSED');
      await sink.comeUp();
      const back = await sender.send(post(sink.url), { timeoutMs: 5000 });
      expect(back.ok).to.equal(true);
    });

    it('a host whose every address refuses the connection gives a connect outcome naming the host, not its addresses', async () => {
      const port = new URL(sink.url).port;
      await sink.goDown();
      const outcome = await sender.send(post(`http://dual.test:${port}/`), { timeoutMs: 5000 });
      expect(outcome).to.include({ ok: false, statusCode: null, errorKind: 'connect' });
      expect(outcome.error).to.equal(`ECONNREFUSED: could not connect to dual.test:${port}`);
    });

    it('a host that does not resolve gives a dns outcome', async () => {
      const outcome = await sender.send(post('http://nowhere.test/hook'), { timeoutMs: 5000 });
      expect(outcome).to.include({ ok: false, statusCode: null, errorKind: 'dns', error: 'ENOTFOUND: could not resolve nowhere.test' });
    });

    it('a header value that would inject another header is refused as an outcome, and nothing is sent', async () => {
      const request = { ...post(sink.url), headers: { 'x-team': 'a\r\nx-injected: 1' } };
      const outcome = await sender.send(request, { timeoutMs: 5000 });
      expect(outcome).to.include({ ok: false, statusCode: null, errorKind: 'other' });
      expect(sink.requests).to.have.length(0);
    });

    it('an unusable URL is an outcome, not an exception', async () => {
      const outcome = await sender.send(post('not a url'), { timeoutMs: 5000 });
      expect(outcome).to.include({ ok: false, statusCode: null, errorKind: 'other' });
    });
  });

  describe('address guard', () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://169.254.170.2/v2/credentials',
      'http://100.100.100.200/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[fe80::1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[64:ff9b::a9fe:a9fe]/',
    ]) {
      it(`refuses the metadata or link-local address in ${url} before connecting, even when private destinations are allowed`, async () => {
        const outcome = await sender.send(post(url), { timeoutMs: 5000 });
        expect(outcome).to.include({ ok: false, statusCode: null, errorKind: 'refused_address' });
        expect(outcome.error).to.include('metadata');
      });
    }

    it('refuses a hostname that resolves to a metadata address, naming the host and not the address', async () => {
      const outcome = await sender.send(post('http://metadata.test/latest/meta-data/'), { timeoutMs: 5000 });
      expect(outcome).to.include({ errorKind: 'refused_address' });
      expect(outcome.error).to.include('metadata.test').and.not.include('169.254');
    });

    it('refuses a hostname when any of its addresses is refused', async () => {
      const port = new URL(sink.url).port;
      const outcome = await sender.send(post(`http://mixed.test:${port}/`), { timeoutMs: 5000 });
      expect(outcome).to.include({ errorKind: 'refused_address' });
      expect(sink.requests).to.have.length(0);
    });

    it('connects to loopback by IP or by name when private destinations are allowed', async () => {
      const port = new URL(sink.url).port;
      expect((await sender.send(post(sink.url), { timeoutMs: 5000 })).ok).to.equal(true);
      expect((await sender.send(post(`http://sink.test:${port}/by-name`), { timeoutMs: 5000 })).ok).to.equal(true);
      expect(sink.requests[1]!.headers.host).to.equal(`sink.test:${port}`);
    });

    describe('with blockPrivateDestinations', () => {
      let strict: HttpSender;
      beforeEach(() => {
        strict = createHttpSender({
          blockPrivateDestinations: true,
          resolveHost: hostsTable({ 'sink.test': [{ address: '127.0.0.1', family: 4 }] }),
        });
      });
      afterEach(() => strict.close());

      for (const host of ['127.0.0.1', 'localhost', 'sink.test']) {
        it(`refuses loopback reached as ${host}`, async () => {
          const port = new URL(sink.url).port;
          const outcome = await strict.send(post(`http://${host}:${port}/`), { timeoutMs: 5000 });
          expect(outcome).to.include({ ok: false, statusCode: null, errorKind: 'refused_address' });
          expect(outcome.error).to.include('private');
          expect(sink.requests).to.have.length(0);
        });
      }

      for (const url of ['http://10.1.2.3/', 'http://192.168.0.10/', 'http://100.64.0.1/', 'http://0.0.0.0/', 'http://[fd12:3456::1]/', 'http://[::1]/']) {
        it(`refuses the private address in ${url}`, async () => {
          const outcome = await strict.send(post(url), { timeoutMs: 5000 });
          expect(outcome).to.include({ errorKind: 'refused_address' });
        });
      }
    });
  });
});
