import { expect } from 'chai';
import { PROVIDER_VERIFICATION_TYPES, verificationConfigSchema, withSigningSecret } from './verification-config.js';

function parse(input: unknown) {
  return verificationConfigSchema.safeParse(input);
}

describe('verificationConfigSchema', () => {
  for (const type of PROVIDER_VERIFICATION_TYPES) {
    it(`accepts ${type} without a secret and defaults toleranceSeconds to 300`, () => {
      const result = parse({ type });
      expect(result.success).to.equal(true);
      expect(result.data).to.deep.equal({ type, toleranceSeconds: 300 });
    });
  }

  it('keeps a given secret and toleranceSeconds', () => {
    expect(parse({ type: 'payments', secret: 'whsec_abc', toleranceSeconds: 60 }).data).to.deep.equal({ type: 'payments', secret: 'whsec_abc', toleranceSeconds: 60 });
  });

  it('refuses toleranceSeconds outside 1..86400 or not an integer', () => {
    for (const toleranceSeconds of [0, 86_401, 1.5, '300']) {
      expect(parse({ type: 'chat', toleranceSeconds }).success, String(toleranceSeconds)).to.equal(false);
    }
  });

  it('accepts a full hmac config and one without prefix', () => {
    const config = { type: 'hmac', secret: 's3cret', algorithm: 'sha512', header: 'X-Signature', encoding: 'base64url', prefix: 'v1=' };
    expect(parse(config).data).to.deep.equal(config);
    expect(parse({ ...config, prefix: undefined }).success).to.equal(true);
  });

  it('refuses an hmac config missing algorithm, header or encoding, or with values outside the lists', () => {
    const config = { type: 'hmac', algorithm: 'sha256', header: 'X-Signature', encoding: 'hex' };
    for (const field of ['algorithm', 'header', 'encoding']) {
      expect(parse({ ...config, [field]: undefined }).success, `without ${field}`).to.equal(false);
    }
    expect(parse({ ...config, algorithm: 'md5' }).success).to.equal(false);
    expect(parse({ ...config, encoding: 'base32' }).success).to.equal(false);
    expect(parse({ ...config, header: 'X Signature' }).success).to.equal(false);
    expect(parse({ ...config, header: '' }).success).to.equal(false);
  });

  it('refuses unknown fields, including toleranceSeconds on hmac and none', () => {
    expect(parse({ type: 'codehost', algorithm: 'sha256' }).success).to.equal(false);
    expect(parse({ type: 'hmac', algorithm: 'sha256', header: 'x', encoding: 'hex', toleranceSeconds: 10 }).success).to.equal(false);
    expect(parse({ type: 'none', secret: 'x' }).success).to.equal(false);
  });

  it('refuses an unknown type', () => {
    expect(parse({ type: 'carrier-pigeon' }).success).to.equal(false);
  });

  it('bounds string lengths', () => {
    expect(parse({ type: 'codehost', secret: 'x'.repeat(512) }).success).to.equal(true);
    expect(parse({ type: 'codehost', secret: 'x'.repeat(513) }).success).to.equal(false);
    expect(parse({ type: 'codehost', secret: '' }).success).to.equal(false);
    const hmac = { type: 'hmac', algorithm: 'sha256', encoding: 'hex' };
    expect(parse({ ...hmac, header: 'x'.repeat(201) }).success).to.equal(false);
    expect(parse({ ...hmac, header: 'x', prefix: 'p'.repeat(65) }).success).to.equal(false);
  });

  it('refuses a standard secret that is not whsec_ + base64', () => {
    expect(parse({ type: 'standard', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }).success).to.equal(true);
    expect(parse({ type: 'standard', secret: 'plain text secret' }).success).to.equal(false);
  });
});

describe('withSigningSecret', () => {
  it('generates a whsec_ secret when none was given', () => {
    const config = withSigningSecret(verificationConfigSchema.parse({ type: 'codehost' }));
    expect(config).to.include({ type: 'codehost', toleranceSeconds: 300 });
    expect(config).to.have.property('secret').that.matches(/^whsec_[A-Za-z0-9+/]{43}=$/);
  });

  it('keeps a given secret', () => {
    expect(withSigningSecret(verificationConfigSchema.parse({ type: 'commerce', secret: 'mine' }), () => 'generated')).to.include({ secret: 'mine' });
  });

  it('leaves none without a secret', () => {
    expect(withSigningSecret({ type: 'none' }, () => 'generated')).to.deep.equal({ type: 'none' });
  });
});
