import { expect } from 'chai';
import { payloadHash } from './payload-hash.js';

describe('payloadHash', () => {
  it('is sha256:<hex> of the body bytes (FIPS 180-2 vectors)', () => {
    expect(payloadHash(Buffer.from('abc'))).to.equal('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(payloadHash(Buffer.alloc(0))).to.equal('sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('hashes bytes, not decoded text: a different encoding of the same text differs', () => {
    expect(payloadHash(Buffer.from('é', 'utf8'))).to.not.equal(payloadHash(Buffer.from('é', 'latin1')));
  });
});
