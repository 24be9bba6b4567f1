import { expect } from 'chai';
import { clientAddress } from './client-address.js';

describe('clientAddress', () => {
  it('with no proxy trusted, is the socket peer whatever X-Forwarded-For says', () => {
    expect(clientAddress('127.0.0.1', '203.0.113.7', 0)).to.equal('127.0.0.1');
    expect(clientAddress('::1', ['203.0.113.7', '198.51.100.1'], 0)).to.equal('::1');
  });

  it('behind one trusted proxy, is the last X-Forwarded-For hop (the one that proxy appended)', () => {
    expect(clientAddress('10.0.0.2', '203.0.113.7', 1)).to.equal('203.0.113.7');
    // A client may send its own X-Forwarded-For: the forged first entry is ignored.
    expect(clientAddress('10.0.0.2', '198.51.100.1, 203.0.113.7', 1)).to.equal('203.0.113.7');
  });

  it('behind two trusted proxies, is the second hop from the end', () => {
    expect(clientAddress('10.0.0.3', '198.51.100.1, 203.0.113.7, 10.0.0.2', 2)).to.equal('203.0.113.7');
  });

  it('joins repeated X-Forwarded-For headers in order', () => {
    expect(clientAddress('10.0.0.2', ['198.51.100.1', '203.0.113.7'], 1)).to.equal('203.0.113.7');
  });

  it('takes the first hop when fewer hops than trusted proxies are present', () => {
    expect(clientAddress('10.0.0.3', '203.0.113.7', 3)).to.equal('203.0.113.7');
  });

  it('is the socket peer when a trusted proxy sent no or an empty X-Forwarded-For', () => {
    expect(clientAddress('10.0.0.2', undefined, 1)).to.equal('10.0.0.2');
    expect(clientAddress('10.0.0.2', ' , ', 1)).to.equal('10.0.0.2');
  });

  it('keeps IPv6 hops and drops a port written after the address', () => {
    expect(clientAddress('10.0.0.2', '2001:db8::5', 1)).to.equal('2001:db8::5');
    expect(clientAddress('10.0.0.2', '[2001:db8::5]:443', 1)).to.equal('2001:db8::5');
    expect(clientAddress('10.0.0.2', '203.0.113.7:51234', 1)).to.equal('203.0.113.7');
  });
});
