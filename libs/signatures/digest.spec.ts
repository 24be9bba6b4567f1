import { expect } from 'chai';
import { constantTimeEqual, encodedDigestMatches } from './digest.js';

describe('constantTimeEqual', () => {
  it('is true for equal bytes and false for different bytes of the same length', () => {
    expect(constantTimeEqual(Buffer.from('abc'), Buffer.from('abc'))).to.equal(true);
    expect(constantTimeEqual(Buffer.from('abc'), Buffer.from('abd'))).to.equal(false);
  });

  it('is false, without throwing, for different lengths', () => {
    expect(constantTimeEqual(Buffer.from('abc'), Buffer.from('abcd'))).to.equal(false);
    expect(constantTimeEqual(Buffer.alloc(0), Buffer.from('a'))).to.equal(false);
  });
});

describe('encodedDigestMatches', () => {
  const digest = Buffer.from('fbff00aa', 'hex');

  it('compares hex without regard to letter case', () => {
    expect(encodedDigestMatches('FBFF00AA', digest, 'hex')).to.equal(true);
    expect(encodedDigestMatches('fbff00ab', digest, 'hex')).to.equal(false);
  });

  it('compares base64 exactly, and base64url with or without padding', () => {
    expect(encodedDigestMatches('+/8Aqg==', digest, 'base64')).to.equal(true);
    expect(encodedDigestMatches('+/8Aqg', digest, 'base64')).to.equal(false);
    expect(encodedDigestMatches('-_8Aqg', digest, 'base64url')).to.equal(true);
    expect(encodedDigestMatches('-_8Aqg==', digest, 'base64url')).to.equal(true);
    expect(encodedDigestMatches('+/8Aqg==', digest, 'base64url')).to.equal(false);
  });
});
