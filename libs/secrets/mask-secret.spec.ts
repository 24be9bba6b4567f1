import { expect } from 'chai';
import { maskSecret } from './mask-secret.js';

describe('maskSecret', () => {
  it('shows **** and the last 4 characters', () => {
    expect(maskSecret('whsec_abcdefghijklmnopWXYZ')).to.equal('****WXYZ');
  });

  it('shows only **** for a secret of 8 characters or fewer, so half of it or more is never revealed', () => {
    expect(maskSecret('abcdefgh')).to.equal('****');
    expect(maskSecret('abc')).to.equal('****');
    expect(maskSecret('')).to.equal('****');
    expect(maskSecret('abcdefghi')).to.equal('****fghi');
  });
});
