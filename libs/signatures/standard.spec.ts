import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { generateSigningSecret } from '../secrets/signing-secret.js';
import { verifySignature } from './verify-signature.js';
import type { HeaderMap } from './header-map.js';

const SECRET = generateSigningSecret();
const MSG_ID = 'msg_2b7Jc0Yq';
const BODY = JSON.stringify({ type: 'invoice.paid', data: { id: 'inv_1' } });
const NOW = Date.UTC(2025, 0, 15, 12);

function sign(secret: string, timestampMs = NOW, body = BODY, msgId = MSG_ID): HeaderMap {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(timestampMs / 1000)),
    'webhook-signature': new Webhook(secret).sign(msgId, new Date(timestampMs), body),
  };
}

function verify(headers: HeaderMap, options: { secret?: string; body?: string; nowMs?: number; toleranceSeconds?: number } = {}) {
  return verifySignature({
    config: { type: 'standard', secret: options.secret ?? SECRET, toleranceSeconds: options.toleranceSeconds },
    rawBody: Buffer.from(options.body ?? BODY),
    headers,
    publicUrl: 'https://relay.test/ingest/acme/std',
    nowMs: options.nowMs ?? NOW,
  });
}

describe('verifySignature standard', () => {
  it('accepts headers made by the standardwebhooks library', () => {
    expect(verify(sign(SECRET))).to.deep.equal({ valid: true });
  });

  it("accepts the specification's published example", () => {
    const headers = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
    const result = verify(headers, { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', body: '{"test": 2432232314}', nowMs: 1614265330_000 });
    expect(result).to.deep.equal({ valid: true });
  });

  it('accepts a secret given without the whsec_ marker', () => {
    expect(verify(sign(SECRET), { secret: SECRET.slice('whsec_'.length) }).valid).to.equal(true);
  });

  it('accepts when any of several space-separated v1 signatures matches, ignoring other versions', () => {
    const headers = sign(SECRET);
    const value = `v1a,AAAA v1,${Buffer.alloc(32).toString('base64')} ${headers['webhook-signature']}`;
    expect(verify({ ...headers, 'webhook-signature': value }).valid).to.equal(true);
  });

  it('when the body changed, answers mismatch', () => {
    expect(verify(sign(SECRET), { body: BODY.replace('inv_1', 'inv_2') })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when the webhook-id was changed, answers mismatch (the id is signed)', () => {
    expect(verify({ ...sign(SECRET), 'webhook-id': 'msg_other' })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when signed with another secret, answers mismatch', () => {
    expect(verify(sign(generateSigningSecret()))).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when any of the three headers is absent, answers missing_header', () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const headers = { ...sign(SECRET), [name]: undefined };
      expect(verify(headers), name).to.deep.equal({ valid: false, reason: 'missing_header' });
    }
  });

  it('when the signature header holds no v1 entry, answers malformed_header', () => {
    expect(verify({ ...sign(SECRET), 'webhook-signature': 'v1a,c2lnbmF0dXJl' })).to.deep.equal({ valid: false, reason: 'malformed_header' });
  });

  it('when the secret is not base64, answers malformed_secret', () => {
    expect(verify(sign(SECRET), { secret: 'whsec_not base64!' })).to.deep.equal({ valid: false, reason: 'malformed_secret' });
  });

  it('refuses a timestamp outside the 300 s default tolerance, in the past or the future, as stale', () => {
    expect(verify(sign(SECRET, NOW - 300_000)).valid).to.equal(true);
    expect(verify(sign(SECRET, NOW - 301_000))).to.deep.equal({ valid: false, reason: 'stale_timestamp' });
    expect(verify(sign(SECRET, NOW + 301_000))).to.deep.equal({ valid: false, reason: 'stale_timestamp' });
  });

  it('applies a configured toleranceSeconds', () => {
    expect(verify(sign(SECRET, NOW - 900_000), { toleranceSeconds: 1000 }).valid).to.equal(true);
  });

  it('after the secret is rotated, a signature made with the old secret no longer validates', () => {
    const rotated = generateSigningSecret();
    expect(verify(sign(SECRET), { secret: rotated }).valid).to.equal(false);
    expect(verify(sign(rotated), { secret: rotated }).valid).to.equal(true);
  });
});
