import { expect } from 'chai';
import { refusalFor } from './address-policy.js';

describe('refusalFor', () => {
  const open = { blockPrivateDestinations: false };
  const strict = { blockPrivateDestinations: true };

  it('allows public addresses under either policy', () => {
    for (const address of ['93.184.215.14', '2606:4700:4700::1111']) {
      expect(refusalFor(address, open), address).to.equal(undefined);
      expect(refusalFor(address, strict), address).to.equal(undefined);
    }
  });

  it('always refuses metadata and link-local addresses, also when carried inside IPv6 forms', () => {
    for (const address of [
      '169.254.169.254',
      '169.254.0.23',
      '100.100.100.200',
      '192.0.0.192',
      'fd00:ec2::254',
      'fe80::1',
      '::ffff:169.254.169.254',
      '64:ff9b::a9fe:a9fe',
      '2002:a9fe:a9fe::1',
    ]) {
      expect(refusalFor(address, open), address).to.equal('metadata');
    }
  });

  it('refuses loopback, private, unique-local, CGNAT and unspecified addresses only when private destinations are blocked', () => {
    for (const address of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd12:3456::1', '::ffff:10.0.0.1']) {
      expect(refusalFor(address, open), address).to.equal(undefined);
      expect(refusalFor(address, strict), address).to.equal('private');
    }
  });

  it('refuses what is not an IP address', () => {
    expect(refusalFor('not-an-ip', open)).to.equal('unparseable');
  });
});
