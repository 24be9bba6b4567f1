import { expect } from 'chai';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { startIngestHarness, type IngestHarness } from '../../testing/ingest-harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const JSON_TYPE = { 'content-type': 'application/json' };

let counter = 0;
const uniqueBody = (label = 'event') => JSON.stringify({ label, n: `${Date.now()}-${++counter}` });

describeEachStore('Ingest dedup', (target) => {
  let h: IngestHarness;

  before(async function () {
    h = await startIngestHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  async function send(path: string, body: string, headers: Record<string, string> = {}) {
    const response = await h.ingest(path, { rawBody: body, headers: { ...JSON_TYPE, ...headers } });
    expect(response.status, response.text).to.equal(200);
    return response.body as { eventId: string; status: 'received' | 'duplicate' };
  }

  describe('under concurrency', () => {
    it('50 parallel identical requests give exactly one received and 49 duplicates of the same event, and one stored event', async () => {
      const source = await h.createUniqueSource({ dedupEnabled: true, dedupStrategy: 'payload_hash' });
      const body = uniqueBody('burst');
      const results = await Promise.all(Array.from({ length: 50 }, () => send(source.path, body)));
      const received = results.filter((result) => result.status === 'received');
      const duplicates = results.filter((result) => result.status === 'duplicate');
      expect(received).to.have.length(1);
      expect(duplicates).to.have.length(49);
      expect(new Set(duplicates.map((result) => result.eventId))).to.deep.equal(new Set([received[0]!.eventId]));
      expect((await h.events(source.id)).map((event) => event.id)).to.deep.equal([received[0]!.eventId]);
    });

    it('50 parallel deliveries with one provider id but different bodies give one received and 49 duplicates', async () => {
      const source = await h.createUniqueSource({ provider: 'codehost', verificationConfig: { type: 'none' }, dedupEnabled: true, dedupStrategy: 'provider_id' });
      const headers = { 'X-GitHub-Delivery': `delivery-${Date.now()}`, 'X-GitHub-Hook-ID': '292430182' };
      const results = await Promise.all(Array.from({ length: 50 }, () => send(source.path, uniqueBody('redelivery'), headers)));
      const received = results.filter((result) => result.status === 'received');
      expect(received).to.have.length(1);
      expect(results.filter((result) => result.status === 'duplicate' && result.eventId === received[0]!.eventId)).to.have.length(49);
      expect(await h.events(source.id)).to.have.length(1);
    });
  });

  describe('the always-on identical payload rule (5 minutes), with dedup disabled', () => {
    it('answers duplicate with the first event id for the same body, and received for another body', async () => {
      const source = await h.createUniqueSource();
      const body = uniqueBody();
      const first = await send(source.path, body);
      expect(first.status).to.equal('received');
      expect(await send(source.path, body)).to.deep.equal({ eventId: first.eventId, status: 'duplicate' });
      expect((await send(source.path, uniqueBody())).status).to.equal('received');
      expect(await h.events(source.id)).to.have.length(2);
    });

    it('treats the same body on another source as a new event', async () => {
      const [a, b] = [await h.createUniqueSource(), await h.createUniqueSource()];
      const body = uniqueBody();
      expect((await send(a.path, body)).status).to.equal('received');
      expect((await send(b.path, body)).status).to.equal('received');
    });

    it('compares bytes: the same JSON with other whitespace is a new event', async () => {
      const source = await h.createUniqueSource();
      const body = uniqueBody();
      expect((await send(source.path, body)).status).to.equal('received');
      expect((await send(source.path, body.replace(':', ': '))).status).to.equal('received');
    });

    it('accepts the same body again once 5 minutes have passed', async () => {
      const source = await h.createUniqueSource();
      const body = uniqueBody();
      const first = await send(source.path, body);
      await h.ageDedupKeys(source.id, 4 * MINUTE);
      expect(await send(source.path, body)).to.deep.equal({ eventId: first.eventId, status: 'duplicate' });
      await h.ageDedupKeys(source.id, MINUTE);
      const again = await send(source.path, body);
      expect(again.status).to.equal('received');
      expect(again.eventId).to.not.equal(first.eventId);
    });
  });

  describe('strategy provider_id', () => {
    const delivery = (id: string) => ({ 'X-GitHub-Delivery': id, 'X-GitHub-Hook-ID': '1001' });

    it('answers duplicate for a redelivery with the same X-GitHub-Delivery, even with another body', async () => {
      const source = await h.createUniqueSource({ provider: 'codehost', verificationConfig: { type: 'none' }, dedupEnabled: true, dedupStrategy: 'provider_id' });
      const first = await send(source.path, uniqueBody(), delivery('d-1'));
      expect(first.status).to.equal('received');
      expect(await send(source.path, uniqueBody(), delivery('d-1'))).to.deep.equal({ eventId: first.eventId, status: 'duplicate' });
      expect((await send(source.path, uniqueBody(), delivery('d-2'))).status).to.equal('received');
      expect(await h.events(source.id)).to.have.length(2);
    });

    it('keeps the provider id for dedupWindowHours, far beyond 5 minutes, and forgets it after', async () => {
      const source = await h.createUniqueSource({ provider: 'codehost', verificationConfig: { type: 'none' }, dedupEnabled: true, dedupStrategy: 'provider_id', dedupWindowHours: 2 });
      const first = await send(source.path, uniqueBody(), delivery('d-window'));
      await h.ageDedupKeys(source.id, 2 * HOUR - MINUTE);
      expect(await send(source.path, uniqueBody(), delivery('d-window'))).to.deep.equal({ eventId: first.eventId, status: 'duplicate' });
      await h.ageDedupKeys(source.id, MINUTE);
      expect((await send(source.path, uniqueBody(), delivery('d-window'))).status).to.equal('received');
    });

    it('with strategy auto on a codehost source, uses X-GitHub-Delivery too', async () => {
      const source = await h.createUniqueSource({ provider: 'codehost', verificationConfig: { type: 'none' }, dedupEnabled: true });
      const first = await send(source.path, uniqueBody(), delivery('auto-1'));
      expect(await send(source.path, uniqueBody(), delivery('auto-1'))).to.deep.equal({ eventId: first.eventId, status: 'duplicate' });
    });
  });

  describe('strategy idempotency_key', () => {
    it('answers duplicate for the same value of dedupCustomHeader, and received for another value or none', async () => {
      const source = await h.createUniqueSource({ dedupEnabled: true, dedupStrategy: 'idempotency_key', dedupCustomHeader: 'X-Idempotency-Key' });
      const first = await send(source.path, uniqueBody(), { 'x-idempotency-key': 'order-42' });
      expect(first.status).to.equal('received');
      expect(await send(source.path, uniqueBody(), { 'X-IDEMPOTENCY-KEY': 'order-42' })).to.deep.equal({ eventId: first.eventId, status: 'duplicate' });
      expect((await send(source.path, uniqueBody(), { 'x-idempotency-key': 'order-43' })).status).to.equal('received');
      expect((await send(source.path, uniqueBody())).status).to.equal('received');
      expect(await h.events(source.id)).to.have.length(3);
    });
  });

  describe('strategy payload_hash', () => {
    it('keeps the body hash for dedupWindowHours instead of 5 minutes', async () => {
      const source = await h.createUniqueSource({ dedupEnabled: true, dedupStrategy: 'payload_hash', dedupWindowHours: 1 });
      const body = uniqueBody();
      const first = await send(source.path, body);
      await h.ageDedupKeys(source.id, 30 * MINUTE);
      expect(await send(source.path, body)).to.deep.equal({ eventId: first.eventId, status: 'duplicate' });
      await h.ageDedupKeys(source.id, 30 * MINUTE);
      expect((await send(source.path, body)).status).to.equal('received');
    });
  });

  describe('strategy none', () => {
    it('ignores provider ids but still applies the identical payload rule', async () => {
      const source = await h.createUniqueSource({ provider: 'codehost', verificationConfig: { type: 'none' }, dedupEnabled: true, dedupStrategy: 'none' });
      const headers = { 'X-GitHub-Delivery': 'same-delivery' };
      const body = uniqueBody();
      const first = await send(source.path, body, headers);
      expect((await send(source.path, uniqueBody(), headers)).status).to.equal('received');
      expect(await send(source.path, body, headers)).to.deep.equal({ eventId: first.eventId, status: 'duplicate' });
    });
  });
});
