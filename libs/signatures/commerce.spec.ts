import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { verifySignature } from './verify-signature.js';
import type { HeaderMap } from './header-map.js';

// No official test vector is published; this one was produced independently with
//   printf '%s' "$BODY" | openssl dgst -sha256 -hmac 'shpss_c0mmerce-app-secret' -binary | base64
const VECTOR_SECRET = 'shpss_c0mmerce-app-secret';
const VECTOR_BODY = '{"id":820982911946154508,"email":"jon@doe.ca","topic":"orders/create"}';
const VECTOR_HMAC = 'YafIVyq2Z3O4vm03wzaPQlJkL1b5u3RV95ndmDjgUVo=';

/** Signs as the provider documents; checked against the openssl vector below before other tests rely on it. */
function shopifyHmac(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

function verify(headers: HeaderMap, secret = VECTOR_SECRET, body = VECTOR_BODY) {
  return verifySignature({ config: { type: 'commerce', secret }, rawBody: Buffer.from(body), headers, publicUrl: 'https://relay.test/ingest/acme/shop', nowMs: Date.now() });
}

describe('verifySignature commerce', () => {
  it('the test signer reproduces the openssl-made vector', () => {
    expect(shopifyHmac(VECTOR_SECRET, VECTOR_BODY)).to.equal(VECTOR_HMAC);
  });

  it('accepts the openssl-made vector', () => {
    expect(verify({ 'x-shopify-hmac-sha256': VECTOR_HMAC })).to.deep.equal({ valid: true });
  });

  it('when the body changed, answers mismatch', () => {
    expect(verify({ 'x-shopify-hmac-sha256': VECTOR_HMAC }, VECTOR_SECRET, VECTOR_BODY.replace('jon', 'eve'))).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when verified with another secret, answers mismatch', () => {
    expect(verify({ 'x-shopify-hmac-sha256': VECTOR_HMAC }, 'shpss_other')).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when the signature is sent as hex instead of base64, answers mismatch', () => {
    const hex = Buffer.from(VECTOR_HMAC, 'base64').toString('hex');
    expect(verify({ 'x-shopify-hmac-sha256': hex })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when the header is absent, answers missing_header', () => {
    expect(verify({ 'x-shopify-topic': 'orders/create' })).to.deep.equal({ valid: false, reason: 'missing_header' });
  });

  it('after the secret is rotated, a signature made with the old secret no longer validates', () => {
    const rotated = 'shpss_rotated-secret';
    expect(verify({ 'x-shopify-hmac-sha256': VECTOR_HMAC }, rotated).valid).to.equal(false);
    expect(verify({ 'x-shopify-hmac-sha256': shopifyHmac(rotated, VECTOR_BODY) }, rotated).valid).to.equal(true);
  });
});
