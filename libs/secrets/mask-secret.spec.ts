import { expect } from 'chai';
import { maskSecret } from './mask-secret.js';

describe('maskSecret', () => {
  it('shows **** and the last 4 characters', () => {
    expect(maskSecret('whsec_abcdefghijklmnopWXYZ')).to.equal('****WXYZ');
  });

  it('shows only **** for a secret shorter than 12 characters, so most of it is never revealed', () => {
    expect(maskSecret('abcdefghijk')).to.equal('****');
    expect(maskSecret('abc')).to.equal('****');
    expect(maskSecret('')).to.equal('****');
    expect(maskSecret('abcdefghijkl')).to.equal('****ijkl');
  });
});
