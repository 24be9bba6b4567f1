import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { verifySignature } from './verify-signature.js';
import { DIGEST_ALGORITHMS, DIGEST_ENCODINGS, type HmacVerificationConfig } from './verification-config.js';
import type { HeaderMap } from './header-map.js';

const SECRET = 'custom-secret';
const BODY = 'hello';
// Produced independently with: printf '%s' hello | openssl dgst -sha512 -hmac custom-secret -binary | base64 | tr '+/' '-_' | tr -d '='
const OPENSSL_SHA512_BASE64URL = 'p7y9jP3bANdTkSEuXuI7TIfdxZM62ncEulAF4p7AbTnh9RZ9oU-FTZCYnDhGfaQ2oYdCalMiTs3k36S3jVIuyg';

const BASE: HmacVerificationConfig = { type: 'hmac', secret: SECRET, algorithm: 'sha256', header: 'X-Signature', encoding: 'hex', prefix: 'sha256=' };

function verify(config: Partial<HmacVerificationConfig>, headers: HeaderMap, body = BODY) {
  return verifySignature({ config: { ...BASE, ...config }, rawBody: Buffer.from(body), headers, publicUrl: 'https://relay.test/ingest/acme/custom', nowMs: Date.now() });
}

function signature(config: Partial<HmacVerificationConfig> = {}, body = BODY): string {
  const { secret, algorithm, encoding, prefix } = { ...BASE, ...config };
  return (prefix ?? '') + createHmac(algorithm, secret).update(body).digest(encoding);
}

describe('verifySignature hmac', () => {
  it('accepts an openssl-made sha512/base64url signature', () => {
    const config = { algorithm: 'sha512', encoding: 'base64url', prefix: undefined } as const;
    expect(verify(config, { 'x-signature': OPENSSL_SHA512_BASE64URL })).to.deep.equal({ valid: true });
  });

  for (const algorithm of DIGEST_ALGORITHMS) {
    for (const encoding of DIGEST_ENCODINGS) {
      it(`accepts ${algorithm} in ${encoding} and refuses it under another algorithm`, () => {
        const value = signature({ algorithm, encoding });
        expect(verify({ algorithm, encoding }, { 'x-signature': value }).valid).to.equal(true);
        const other = algorithm === 'sha256' ? 'sha512' : 'sha256';
        expect(verify({ algorithm: other, encoding }, { 'x-signature': value }).valid).to.equal(false);
      });
    }
  }

  it('reads the configured header whatever its letter case', () => {
    expect(verify({ header: 'X-SIGNATURE' }, { 'x-signature': signature() }).valid).to.equal(true);
  });

  it('works without a prefix', () => {
    expect(verify({ prefix: undefined }, { 'x-signature': signature({ prefix: undefined }) }).valid).to.equal(true);
  });

  it('accepts base64url with padding', () => {
    const value = createHmac('sha256', SECRET).update(BODY).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
    expect(value.endsWith('=')).to.equal(true);
    expect(verify({ encoding: 'base64url', prefix: '' }, { 'x-signature': value }).valid).to.equal(true);
  });

  it('when the configured prefix is missing, answers malformed_header', () => {
    expect(verify({}, { 'x-signature': signature({ prefix: 'sha1=' }) })).to.deep.equal({ valid: false, reason: 'malformed_header' });
  });

  it('when the body changed, answers mismatch', () => {
    expect(verify({}, { 'x-signature': signature() }, 'hellO')).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when signed with another secret, answers mismatch', () => {
    expect(verify({}, { 'x-signature': signature({ secret: 'someone-else' }) })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when the configured header is absent, answers missing_header (another signature header does not count)', () => {
    expect(verify({}, { 'x-hub-signature-256': signature() })).to.deep.equal({ valid: false, reason: 'missing_header' });
  });

  it('after the secret is rotated, a signature made with the old secret no longer validates', () => {
    const rotated = 'custom-secret-2';
    expect(verify({ secret: rotated }, { 'x-signature': signature() }).valid).to.equal(false);
    expect(verify({ secret: rotated }, { 'x-signature': signature({ secret: rotated }) }).valid).to.equal(true);
  });
});
