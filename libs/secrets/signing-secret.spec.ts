import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { generateSigningSecret } from './signing-secret.js';

describe('generateSigningSecret', () => {
  it('is whsec_ followed by the base64 of 32 bytes', () => {
    const secret = generateSigningSecret();
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).to.have.length(32);
  });

  it('differs on every call', () => {
    const secrets = new Set(Array.from({ length: 100 }, generateSigningSecret));
    expect(secrets.size).to.equal(100);
  });

  it('is accepted as a secret by the standardwebhooks library', () => {
    const hook = new Webhook(generateSigningSecret());
    expect(hook.sign('msg_1', new Date(), '{}')).to.match(/^v1,[A-Za-z0-9+/]{43}=$/);
  });
});
