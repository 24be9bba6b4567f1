import { createHmac } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import { expect } from 'chai';
import { verifySignature } from './verify-signature.js';
import { PROVIDER_VERIFICATION_TYPES, type VerificationConfig } from './verification-config.js';
import type { HeaderMap } from './header-map.js';

const BODY = Buffer.from('{"ok":true}');

function verify(config: VerificationConfig, headers: HeaderMap = {}) {
  return verifySignature({ config, rawBody: BODY, headers, publicUrl: 'https://relay.test/ingest/acme/src', nowMs: Date.now() });
}

describe('verifySignature', () => {
  it('with type none, accepts anything', () => {
    expect(verify({ type: 'none' })).to.deep.equal({ valid: true });
  });

  it('with a type it does not know (e.g. read back from an older or newer store), answers unsupported_type', () => {
    for (const type of ['md5', 'constructor', '__proto__', 'toString']) {
      expect(verify({ type, secret: 's' } as unknown as VerificationConfig), type).to.deep.equal({ valid: false, reason: 'unsupported_type' });
    }
  });

  it('with an empty secret, answers missing_secret rather than accepting an HMAC under an empty key', () => {
    const emptyKeySignature = `sha256=${createHmac('sha256', '').update(BODY).digest('hex')}`;
    expect(verify({ type: 'codehost', secret: '' }, { 'x-hub-signature-256': emptyKeySignature })).to.deep.equal({ valid: false, reason: 'missing_secret' });
  });

  it('when the signature header was sent twice, answers duplicate_header instead of picking one', async () => {
    const good = await sign('s', BODY.toString());
    expect(verify({ type: 'codehost', secret: 's' }, { 'x-hub-signature-256': [good, 'sha256=00'] })).to.deep.equal({ valid: false, reason: 'duplicate_header' });
  });

  it('takes a header given as a one-element array as its value', async () => {
    const good = await sign('s', BODY.toString());
    expect(verify({ type: 'codehost', secret: 's' }, { 'x-hub-signature-256': [good] }).valid).to.equal(true);
  });

  it('treats an empty or blank header as missing', () => {
    expect(verify({ type: 'codehost', secret: 's' }, { 'x-hub-signature-256': '  ' })).to.deep.equal({ valid: false, reason: 'missing_header' });
  });

  it('never throws on hostile header values, for any type', () => {
    const hostile = ['', '=', ',', ' ', 'v1,', 't=,v1=', 'v0=', '\u0000', '😀', 'x'.repeat(100_000), 'sha256=' + 'zz'.repeat(32), 't=99999999999999999999,v1=00'];
    const names = ['x-hub-signature-256', 'stripe-signature', 'x-slack-signature', 'x-slack-request-timestamp', 'x-shopify-hmac-sha256', 'x-twilio-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-sig'];
    const configs: VerificationConfig[] = [
      ...PROVIDER_VERIFICATION_TYPES.map((type) => ({ type, secret: 'whsec_c2VjcmV0' })),
      { type: 'hmac', secret: 's', algorithm: 'sha1', header: 'x-sig', encoding: 'base64', prefix: 'p=' },
    ];
    for (const config of configs) {
      for (const value of hostile) {
        const headers = Object.fromEntries(names.map((name) => [name, value]));
        const result = verify(config, headers);
        expect(result.valid, `${config.type} with ${JSON.stringify(value.slice(0, 20))}`).to.equal(false);
        expect(result).to.have.property('reason').that.is.a('string');
      }
    }
  });
});
