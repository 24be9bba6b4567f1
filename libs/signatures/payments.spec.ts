import { expect } from 'chai';
import Stripe from 'stripe';
import { verifySignature } from './verify-signature.js';
import type { HeaderMap } from './header-map.js';

const stripe = new Stripe('sk_test_x');
const SECRET = 'whsec_payments_test_secret';
const BODY = JSON.stringify({ id: 'evt_1', object: 'event', type: 'payment_intent.succeeded' });
const NOW = Date.UTC(2025, 0, 15, 12);
const NOW_SECONDS = NOW / 1000;

function header(secret: string, timestamp = NOW_SECONDS, payload = BODY): string {
  return stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

function verify(headers: HeaderMap, options: { secret?: string; body?: string; toleranceSeconds?: number } = {}) {
  return verifySignature({
    config: { type: 'payments', secret: options.secret ?? SECRET, toleranceSeconds: options.toleranceSeconds },
    rawBody: Buffer.from(options.body ?? BODY),
    headers,
    publicUrl: 'https://relay.test/ingest/acme/pay',
    nowMs: NOW,
  });
}

/** The v1 signature out of a header made by the provider's library. */
function v1Of(value: string): string {
  return value.split(',').find((part) => part.startsWith('v1='))!.slice(3);
}

describe('verifySignature payments', () => {
  it('accepts a header made by the stripe library', () => {
    expect(verify({ 'stripe-signature': header(SECRET) })).to.deep.equal({ valid: true });
  });

  it('accepts when any of several v1 signatures matches (secret roll on the sender side)', () => {
    const value = `t=${NOW_SECONDS},v1=${v1Of(header('whsec_previous'))},v1=${v1Of(header(SECRET))}`;
    expect(verify({ 'stripe-signature': value }).valid).to.equal(true);
  });

  it('ignores v0 entries and spaces around items', () => {
    const value = `t=${NOW_SECONDS}, v0=deadbeef, v1=${v1Of(header(SECRET))}`;
    expect(verify({ 'stripe-signature': value }).valid).to.equal(true);
  });

  it('when the body changed, answers mismatch', () => {
    expect(verify({ 'stripe-signature': header(SECRET) }, { body: BODY.replace('evt_1', 'evt_2') })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when the timestamp in the header was changed, answers mismatch (the timestamp is signed)', () => {
    const value = header(SECRET).replace(`t=${NOW_SECONDS}`, `t=${NOW_SECONDS - 1}`);
    expect(verify({ 'stripe-signature': value })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when signed with another secret, answers mismatch', () => {
    expect(verify({ 'stripe-signature': header('whsec_someone_else') })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when the header is absent, answers missing_header', () => {
    expect(verify({})).to.deep.equal({ valid: false, reason: 'missing_header' });
  });

  it('when the header has no timestamp or no v1, or a non-numeric timestamp, answers malformed_header', () => {
    const signature = v1Of(header(SECRET));
    for (const value of [`v1=${signature}`, `t=${NOW_SECONDS}`, `t=${NOW_SECONDS},v0=${signature}`, `t=soon,v1=${signature}`, 'garbage', `t=1,t=2,v1=${signature}`]) {
      expect(verify({ 'stripe-signature': value }), value).to.deep.equal({ valid: false, reason: 'malformed_header' });
    }
  });

  it('accepts a timestamp at the edge of the default 300 s tolerance and refuses one past it as stale', () => {
    expect(verify({ 'stripe-signature': header(SECRET, NOW_SECONDS - 300) }).valid).to.equal(true);
    expect(verify({ 'stripe-signature': header(SECRET, NOW_SECONDS - 301) })).to.deep.equal({ valid: false, reason: 'stale_timestamp' });
  });

  it('refuses a timestamp too far in the future as stale', () => {
    expect(verify({ 'stripe-signature': header(SECRET, NOW_SECONDS + 301) })).to.deep.equal({ valid: false, reason: 'stale_timestamp' });
  });

  it('applies a configured toleranceSeconds', () => {
    const oldHeader = { 'stripe-signature': header(SECRET, NOW_SECONDS - 500) };
    expect(verify(oldHeader, { toleranceSeconds: 600 }).valid).to.equal(true);
    expect(verify(oldHeader, { toleranceSeconds: 60 })).to.deep.equal({ valid: false, reason: 'stale_timestamp' });
  });

  it('after the secret is rotated, a signature made with the old secret no longer validates', () => {
    const rotated = 'whsec_payments_rotated';
    expect(verify({ 'stripe-signature': header(SECRET) }, { secret: rotated }).valid).to.equal(false);
    expect(verify({ 'stripe-signature': header(rotated) }, { secret: rotated }).valid).to.equal(true);
  });
});
