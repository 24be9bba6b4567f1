import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { startHttpSink, type HttpSink, type RecordedRequest } from '../testing/http-sink.js';
import { buildDeliveryRequest, type DeliveryDestination, type DeliveryEvent, type DeliveryRequestInput } from './build-request.js';
import { createHttpSender, type HttpSender } from './send-request.js';

const signingSecret = `whsec_${randomBytes(32).toString('base64')}`;

function destinationFor(sink: HttpSink, overrides: Partial<DeliveryDestination> = {}): DeliveryDestination {
  return { url: `${sink.url}/hooks?team=a`, method: 'POST', headers: {}, authType: 'none', signingSecret, ...overrides } as DeliveryDestination;
}

function event(overrides: Partial<DeliveryEvent> = {}): DeliveryEvent {
  return {
    eventId: 'evt_01J0000000000000000000000',
    sourceId: 'src_01J0000000000000000000000',
    sourceSlug: 'github-main',
    rawBody: Buffer.from('{"action":"opened",  "number": 7}\n'),
    contentType: 'application/json',
    providerHeaders: { 'x-github-event': 'pull_request', 'user-agent': 'GitHub-Hookshot/abc' },
    signatureValid: true,
    ...overrides,
  };
}

describe('buildDeliveryRequest', () => {
  let sink: HttpSink;
  let sender: HttpSender;

  before(async () => {
    sink = await startHttpSink();
    sender = createHttpSender({ blockPrivateDestinations: false });
  });
  after(async () => {
    await sender.close();
    await sink.close();
  });

  async function deliver(input: Partial<DeliveryRequestInput> = {}): Promise<RecordedRequest> {
    const before = sink.requests.length;
    const request = buildDeliveryRequest({
      destination: destinationFor(sink),
      event: event(),
      deliveryId: 'dlv_01J0000000000000000000000',
      attemptNumber: 1,
      nowMs: Date.now(),
      ...input,
    });
    const outcome = await sender.send(request, { timeoutMs: 5000 });
    expect(outcome.ok, outcome.error).to.equal(true);
    return (await sink.waitForRequests(before + 1))[before]!;
  }

  describe('body', () => {
    it('delivers the original body byte-exact with its Content-Type, to the destination URL and method', async () => {
      const rawBody = Buffer.from([0x00, 0xff, 0xfe, 0x0d, 0x0a, 0x80, 0x7b, 0x22]);
      const received = await deliver({
        destination: destinationFor(sink, { method: 'PUT' }),
        event: event({ rawBody, contentType: 'application/octet-stream' }),
      });
      expect(received.method).to.equal('PUT');
      expect(received.url).to.equal('/hooks?team=a');
      expect(received.body.equals(rawBody)).to.equal(true);
      expect(received.headers['content-type']).to.equal('application/octet-stream');
      expect(received.headers['content-length']).to.equal(String(rawBody.length));
    });

    it('keeps form bodies and their content type as received', async () => {
      const rawBody = Buffer.from('payload=%7B%22a%22%3A1%7D&x=%C3%A9');
      const received = await deliver({ event: event({ rawBody, contentType: 'application/x-www-form-urlencoded' }) });
      expect(received.body.equals(rawBody)).to.equal(true);
      expect(received.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    });
  });

  describe('provider headers', () => {
    const providerHeaders = {
      'x-github-event': 'push',
      'x-github-delivery': '72d3162e',
      'user-agent': 'GitHub-Hookshot/abc',
      connection: 'keep-alive, x-hop-listed',
      'x-hop-listed': 'listed in Connection',
      'keep-alive': 'timeout=5',
      'proxy-authorization': 'Basic cHJveHk=',
      'proxy-connection': 'keep-alive',
      te: 'trailers',
      trailer: 'x-checksum',
      'transfer-encoding': 'chunked',
      upgrade: 'h2c',
      host: 'relay.example.com',
      'content-length': '999',
      authorization: 'Bearer provider-token-for-the-relay',
      cookie: 'session=abc',
      'x-forwarded-for': '203.0.113.9',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'relay.example.com',
      forwarded: 'for=203.0.113.9;proto=https',
      'x-real-ip': '203.0.113.9',
      via: '1.1 edge-lb',
      'x-relay-signature-valid': 'true',
      'x-relay-internal': 'spoofed',
      'accept-encoding': 'gzip, br',
      expect: '100-continue',
    };
    const dropped = Object.keys(providerHeaders).filter(
      (name) => !['x-github-event', 'x-github-delivery', 'user-agent'].includes(name),
    );

    it('leaves out hop-by-hop, framing, credential, forwarding and relay headers when building', () => {
      const request = buildDeliveryRequest({
        destination: { url: 'https://example.com/hook', method: 'POST', headers: {}, authType: 'none', signingSecret },
        event: event({ providerHeaders }),
        deliveryId: 'dlv_1',
        attemptNumber: 1,
        nowMs: Date.now(),
      });
      const names = Object.keys(request.headers).map((name) => name.toLowerCase());
      expect(names).to.include.members(['x-github-event', 'x-github-delivery', 'user-agent']);
      for (const name of dropped) expect(names, name).not.to.include(name);
    });

    it('forwards the provider headers that remain', async () => {
      const received = await deliver({ event: event({ providerHeaders }) });
      expect(received.headers['x-github-event']).to.equal('push');
      expect(received.headers['x-github-delivery']).to.equal('72d3162e');
      expect(received.headers['user-agent']).to.equal('GitHub-Hookshot/abc');
      expect(received.headers.host).to.equal(new URL(sink.url).host);
      expect(received.headers['content-length']).to.equal(String(event().rawBody.length));
      for (const name of ['authorization', 'cookie', 'x-forwarded-for', 'forwarded', 'x-real-ip', 'x-hop-listed', 'x-relay-signature-valid']) {
        expect(received.headers, name).not.to.have.property(name);
      }
    });
  });

  describe('header layers', () => {
    it('lets a later layer win on the same name in any letter case, keeping one header per name', () => {
      const request = buildDeliveryRequest({
        destination: {
          url: 'https://example.com/hook',
          method: 'POST',
          headers: {
            'X-Env': 'destination',
            'CONTENT-TYPE': 'application/vnd.acme+json',
            Authorization: 'Bearer static-from-headers',
            'x-relay-attempt': '99',
            'Webhook-Id': 'spoofed',
          },
          authType: 'bearer',
          authConfig: { token: 'from-auth' },
          signingSecret,
        },
        event: event({ providerHeaders: { 'x-env': 'provider', 'content-type': 'text/plain', 'x-only-provider': 'kept' } }),
        deliveryId: 'dlv_layers',
        attemptNumber: 3,
        nowMs: Date.now(),
      });
      const lowerNames = Object.keys(request.headers).map((name) => name.toLowerCase());
      expect(new Set(lowerNames).size).to.equal(lowerNames.length);
      const header = (name: string) => Object.entries(request.headers).find(([key]) => key.toLowerCase() === name)?.[1];
      expect(header('x-env')).to.equal('destination');
      expect(header('x-only-provider')).to.equal('kept');
      expect(header('content-type')).to.equal('application/vnd.acme+json');
      expect(header('authorization')).to.equal('Bearer from-auth');
      expect(header('x-relay-attempt')).to.equal('3');
      expect(header('webhook-id')).to.equal('dlv_layers');
    });

    it("uses the event's Content-Type over the provider header of the same name", () => {
      const request = buildDeliveryRequest({
        destination: { url: 'https://example.com/hook', method: 'POST', headers: {}, authType: 'none', signingSecret },
        event: event({ contentType: 'application/json; charset=utf-8', providerHeaders: { 'content-type': 'text/plain' } }),
        deliveryId: 'dlv_ct',
        attemptNumber: 1,
        nowMs: Date.now(),
      });
      expect(request.headers['content-type']).to.equal('application/json; charset=utf-8');
    });

    it("sends the attempt's traceparent in place of the sender's and of a configured one", () => {
      const attempt = '00-4bf92f3577b34da6a3ce929d0e0e4736-a3ce929d0e0e4736-01';
      const request = buildDeliveryRequest({
        destination: { url: 'https://example.com/hook', method: 'POST', headers: { TraceParent: 'configured' }, authType: 'none', signingSecret },
        event: event({ providerHeaders: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } }),
        deliveryId: 'dlv_trace',
        attemptNumber: 1,
        nowMs: Date.now(),
        traceparent: attempt,
      });
      const named = Object.entries(request.headers).filter(([name]) => name.toLowerCase() === 'traceparent');
      expect(named).to.deep.equal([['traceparent', attempt]]);
    });

    it('drops framing headers from the destination headers but sends the rest', async () => {
      const received = await deliver({
        destination: destinationFor(sink, {
          headers: { 'X-Team': 'payments', 'Content-Length': '1', Host: 'elsewhere.example', 'Transfer-Encoding': 'chunked' },
        }),
      });
      expect(received.headers['x-team']).to.equal('payments');
      expect(received.headers.host).to.equal(new URL(sink.url).host);
      expect(received.body.equals(event().rawBody)).to.equal(true);
      expect(received.headers).not.to.have.property('transfer-encoding');
    });
  });

  describe('authentication', () => {
    it('basic: sends Authorization: Basic base64(username:password)', async () => {
      const received = await deliver({
        destination: destinationFor(sink, { authType: 'basic', authConfig: { username: 'relay', password: 'p@ss:wörd' } }),
      });
      expect(received.headers.authorization).to.equal(`Basic ${Buffer.from('relay:p@ss:wörd', 'utf8').toString('base64')}`);
    });

    it('bearer: sends Authorization: Bearer <token>', async () => {
      const received = await deliver({ destination: destinationFor(sink, { authType: 'bearer', authConfig: { token: 'tok_123' } }) });
      expect(received.headers.authorization).to.equal('Bearer tok_123');
    });

    it('api_key: sends the key in the configured header', async () => {
      const received = await deliver({
        destination: destinationFor(sink, { authType: 'api_key', authConfig: { headerName: 'X-API-Key', key: 'key_abc' } }),
      });
      expect(received.headers['x-api-key']).to.equal('key_abc');
      expect(received.headers).not.to.have.property('authorization');
    });

    it('custom_header: sends the configured header and value', async () => {
      const received = await deliver({
        destination: destinationFor(sink, { authType: 'custom_header', authConfig: { headerName: 'X-Shared-Token', headerValue: 's3cret' } }),
      });
      expect(received.headers['x-shared-token']).to.equal('s3cret');
    });

    it('none: sends no credentials', async () => {
      const received = await deliver();
      expect(received.headers).not.to.have.property('authorization');
    });
  });

  describe('relay headers', () => {
    it('identifies the event, the delivery, the attempt and the source (slug, else id)', async () => {
      const bySlug = await deliver({ deliveryId: 'dlv_relay', attemptNumber: 2 });
      expect(bySlug.headers['x-relay-event-id']).to.equal('evt_01J0000000000000000000000');
      expect(bySlug.headers['x-relay-delivery-id']).to.equal('dlv_relay');
      expect(bySlug.headers['x-relay-attempt']).to.equal('2');
      expect(bySlug.headers['x-relay-source']).to.equal('github-main');
      const byId = await deliver({ event: event({ sourceSlug: undefined }) });
      expect(byId.headers['x-relay-source']).to.equal('src_01J0000000000000000000000');
    });

    it('sends X-Relay-Signature-Valid: false only when the ingest signature failed', async () => {
      const failed = await deliver({ event: event({ signatureValid: false }) });
      expect(failed.headers['x-relay-signature-valid']).to.equal('false');
      const valid = await deliver({ event: event({ signatureValid: true }) });
      expect(valid.headers).not.to.have.property('x-relay-signature-valid');
    });
  });

  describe('Standard Webhooks signature', () => {
    it('signs id.timestamp.body so that the standardwebhooks library verifies it', async () => {
      const nowMs = Date.now();
      const received = await deliver({ deliveryId: 'dlv_signed', nowMs });
      expect(received.headers['webhook-id']).to.equal('dlv_signed');
      expect(received.headers['webhook-timestamp']).to.equal(String(Math.floor(nowMs / 1000)));
      expect(received.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(() => new Webhook(signingSecret).verify(received.body.toString('utf8'), received.headers as Record<string, string>)).not.to.throw();
    });

    it('re-signs each attempt with its own timestamp', async () => {
      const first = await deliver({ attemptNumber: 1, nowMs: Date.now() - 60_000 });
      const second = await deliver({ attemptNumber: 2, nowMs: Date.now() });
      expect(first.headers['webhook-timestamp']).not.to.equal(second.headers['webhook-timestamp']);
      expect(first.headers['webhook-signature']).not.to.equal(second.headers['webhook-signature']);
      for (const received of [first, second]) {
        expect(() => new Webhook(signingSecret).verify(received.body.toString('utf8'), received.headers as Record<string, string>)).not.to.throw();
      }
    });

    it('does not verify against a changed body or another secret', async () => {
      const received = await deliver();
      const headers = received.headers as Record<string, string>;
      expect(() => new Webhook(signingSecret).verify('{"action":"closed"}', headers)).to.throw();
      const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
      expect(() => new Webhook(otherSecret).verify(received.body.toString('utf8'), headers)).to.throw();
    });
  });
});
