import { expect } from 'chai';
import type { HeaderMap } from '../signatures/header-map.js';
import { dedupKeys, IDENTICAL_PAYLOAD_WINDOW_MS, type DedupSettings } from './dedup-keys.js';

const ABC_SHA256 = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
const HASH_KEY = `hash:${ABC_SHA256}`;
const FIVE_MINUTES = 300_000;
const DAY = 24 * 3_600_000;

const SETTINGS: DedupSettings = { dedupEnabled: true, dedupStrategy: 'auto', dedupWindowHours: 24, dedupCustomHeader: null, provider: 'generic' };

function keys(settings: Partial<DedupSettings>, headers: HeaderMap = {}, json?: unknown) {
  return dedupKeys({ source: { ...SETTINGS, ...settings }, rawBody: Buffer.from('abc'), json, headers });
}

/** Only the always-on identical-payload key. */
const HASH_ONLY = [{ key: HASH_KEY, windowMs: FIVE_MINUTES }];

function withStrategyKey(key: string, windowMs = DAY) {
  return [{ key: HASH_KEY, windowMs: FIVE_MINUTES }, { key, windowMs }];
}

describe('dedupKeys', () => {
  it('keeps no id read from the body in clear for a source that encrypts fields', () => {
    const headers = { 'stripe-signature': 't=1,v1=x' };
    expect(keys({ provider: 'payments' }, headers, { id: 'evt_card_4111' })).to.deep.equal(withStrategyKey('pid:payments:evt_card_4111'));
    const sealed = keys({ provider: 'payments', encryptFields: ['$.id'] }, headers, { id: 'evt_card_4111' });
    expect(JSON.stringify(sealed)).not.to.include('evt_card_4111');
    expect(sealed[1]!.key).to.match(/^pid:payments:sha256:[0-9a-f]{64}$/);
  });

  it('the identical-payload window is 5 minutes', () => {
    expect(IDENTICAL_PAYLOAD_WINDOW_MS).to.equal(FIVE_MINUTES);
  });

  it('uses the body hash the caller already computed', () => {
    const bodySha256 = 'f'.repeat(64);
    const result = dedupKeys({ source: { ...SETTINGS, dedupEnabled: false }, rawBody: Buffer.from('abc'), headers: {}, bodySha256 });
    expect(result).to.deep.equal([{ key: `hash:${bodySha256}`, windowMs: FIVE_MINUTES }]);
  });

  it('reads the parsed body only when the sender keeps its id in the body', () => {
    let reads = 0;
    const input = (provider: DedupSettings['provider'], headers: HeaderMap) => ({
      source: { ...SETTINGS, provider },
      rawBody: Buffer.from('abc'),
      headers,
      get json() {
        reads += 1;
        return { id: 'evt_1' };
      },
    });
    dedupKeys(input('codehost', { 'x-github-delivery': 'd-1' }));
    expect(reads).to.equal(0);
    expect(dedupKeys(input('payments', {}))[1]).to.deep.equal({ key: 'pid:payments:evt_1', windowMs: DAY });
    expect(reads).to.equal(1);
  });

  describe('when dedup is disabled', () => {
    it('gives only the 5-minute payload hash key, whatever the strategy and headers', () => {
      for (const dedupStrategy of ['auto', 'provider_id', 'payload_hash', 'idempotency_key', 'none'] as const) {
        const headers = { 'x-github-delivery': 'd-1', 'idempotency-key': 'k-1' };
        expect(keys({ dedupEnabled: false, dedupStrategy, dedupCustomHeader: 'Idempotency-Key' }, headers), dedupStrategy).to.deep.equal(HASH_ONLY);
      }
    });
  });

  describe('strategy none', () => {
    it('gives only the 5-minute payload hash key', () => {
      expect(keys({ dedupStrategy: 'none' }, { 'webhook-id': 'msg_1' })).to.deep.equal(HASH_ONLY);
    });
  });

  describe('strategy payload_hash', () => {
    it('gives the payload hash key once, with the longer dedupWindowHours window', () => {
      expect(keys({ dedupStrategy: 'payload_hash', dedupWindowHours: 72 })).to.deep.equal([{ key: HASH_KEY, windowMs: 72 * 3_600_000 }]);
    });
  });

  describe('strategy idempotency_key', () => {
    it('keys on the value of dedupCustomHeader, its name matched in any case', () => {
      const result = keys({ dedupStrategy: 'idempotency_key', dedupCustomHeader: 'Idempotency-Key', dedupWindowHours: 2 }, { 'idempotency-key': 'order-42' });
      expect(result).to.deep.equal(withStrategyKey('idem:order-42', 2 * 3_600_000));
    });

    it('gives no strategy key when the header is absent, blank, sent twice, or no header is configured', () => {
      const settings = { dedupStrategy: 'idempotency_key', dedupCustomHeader: 'Idempotency-Key' } as const;
      expect(keys(settings, {})).to.deep.equal(HASH_ONLY);
      expect(keys(settings, { 'idempotency-key': ' ' })).to.deep.equal(HASH_ONLY);
      expect(keys(settings, { 'idempotency-key': ['a', 'b'] })).to.deep.equal(HASH_ONLY);
      expect(keys({ ...settings, dedupCustomHeader: null }, { 'idempotency-key': 'order-42' })).to.deep.equal(HASH_ONLY);
    });
  });

  describe('strategy provider_id', () => {
    const cases: Array<{ provider: DedupSettings['provider']; headers: HeaderMap; json?: unknown; key: string; title: string }> = [
      { title: 'codehost: X-GitHub-Delivery with X-GitHub-Hook-ID', provider: 'codehost', headers: { 'x-github-delivery': '72d3162e', 'x-github-hook-id': '292430182' }, key: 'pid:codehost:72d3162e:292430182' },
      { title: 'codehost: X-GitHub-Delivery alone', provider: 'codehost', headers: { 'x-github-delivery': '72d3162e' }, key: 'pid:codehost:72d3162e' },
      { title: 'payments: the body id', provider: 'payments', headers: {}, json: { id: 'evt_1NG8Du2eZvKYlo2C', object: 'event' }, key: 'pid:payments:evt_1NG8Du2eZvKYlo2C' },
      { title: 'chat: the body event_id', provider: 'chat', headers: {}, json: { type: 'event_callback', event_id: 'Ev08MFMKH6' }, key: 'pid:chat:Ev08MFMKH6' },
      { title: 'commerce: X-Shopify-Webhook-Id', provider: 'commerce', headers: { 'x-shopify-webhook-id': 'b54557e4' }, key: 'pid:commerce:b54557e4' },
      { title: 'telecom: I-Twilio-Idempotency-Token', provider: 'telecom', headers: { 'i-twilio-idempotency-token': 'tok-1' }, key: 'pid:telecom:tok-1' },
      { title: 'custom: webhook-id (Standard Webhooks)', provider: 'custom', headers: { 'webhook-id': 'msg_2b7' }, key: 'pid:standard:msg_2b7' },
    ];
    for (const { title, provider, headers, json, key } of cases) {
      it(`uses ${title}`, () => {
        expect(keys({ dedupStrategy: 'provider_id', provider }, headers, json)).to.deep.equal(withStrategyKey(key));
      });
    }

    it('gives the same key to a redelivery with the same provider id', () => {
      const first = dedupKeys({ source: { ...SETTINGS, dedupStrategy: 'provider_id', provider: 'commerce' }, rawBody: Buffer.from('{"a":1}'), headers: { 'x-shopify-webhook-id': 'w-1' } });
      const again = dedupKeys({ source: { ...SETTINGS, dedupStrategy: 'provider_id', provider: 'commerce' }, rawBody: Buffer.from('{"a":1 }'), headers: { 'x-shopify-webhook-id': 'w-1' } });
      expect(first[1]).to.deep.equal(again[1]);
      expect(first[0]).to.not.deep.equal(again[0]);
    });

    it('gives no strategy key when the provider id is missing', () => {
      expect(keys({ dedupStrategy: 'provider_id', provider: 'payments' }, {}, { object: 'event' })).to.deep.equal(HASH_ONLY);
      expect(keys({ dedupStrategy: 'provider_id', provider: 'payments' }, {}, undefined)).to.deep.equal(HASH_ONLY);
      expect(keys({ dedupStrategy: 'provider_id', provider: 'codehost' }, {})).to.deep.equal(HASH_ONLY);
    });

    it('ignores a body id that is not a non-empty string', () => {
      for (const json of [{ id: 42 }, { id: '' }, [{ id: 'evt_1' }], 'evt_1', null]) {
        expect(keys({ dedupStrategy: 'provider_id', provider: 'payments' }, {}, json), JSON.stringify(json)).to.deep.equal(HASH_ONLY);
      }
    });

    it('bounds a very long id by hashing it', () => {
      const [, strategy] = keys({ dedupStrategy: 'provider_id', provider: 'telecom' }, { 'i-twilio-idempotency-token': 'x'.repeat(5000) });
      expect(strategy.key).to.match(/^pid:telecom:sha256:[0-9a-f]{64}$/);
    });
  });

  describe('strategy auto', () => {
    it("uses the declared provider's id", () => {
      expect(keys({ provider: 'payments' }, {}, { id: 'evt_1' })).to.deep.equal(withStrategyKey('pid:payments:evt_1'));
    });

    it('uses an id found in the headers when the source declares no provider', () => {
      expect(keys({ provider: undefined }, { 'x-github-delivery': 'd-1' })).to.deep.equal(withStrategyKey('pid:codehost:d-1'));
      expect(keys({ provider: null }, { 'webhook-id': 'msg_1' })).to.deep.equal(withStrategyKey('pid:standard:msg_1'));
    });

    it('trusts a body id on a generic source only when the headers identify its sender', () => {
      expect(keys({ provider: 'generic' }, { 'stripe-signature': 't=1,v1=00' }, { id: 'evt_1' })).to.deep.equal(withStrategyKey('pid:payments:evt_1'));
      expect(keys({ provider: 'generic' }, { 'x-slack-signature': 'v0=00' }, { event_id: 'Ev1' })).to.deep.equal(withStrategyKey('pid:chat:Ev1'));
      expect(keys({ provider: 'generic' }, {}, { id: 'customer_7' })).to.deep.equal([{ key: HASH_KEY, windowMs: DAY }]);
    });

    it("falls back to an id in the headers when the declared provider's id is missing", () => {
      expect(keys({ provider: 'payments' }, { 'webhook-id': 'msg_1' }, { object: 'event' })).to.deep.equal(withStrategyKey('pid:standard:msg_1'));
    });

    it('falls back to the payload hash over dedupWindowHours when no provider id is found', () => {
      expect(keys({ provider: 'chat', dedupWindowHours: 168 }, {}, { type: 'url_verification' })).to.deep.equal([{ key: HASH_KEY, windowMs: 168 * 3_600_000 }]);
    });
  });
});
