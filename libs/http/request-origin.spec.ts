import { expect } from 'chai';
import { requestOrigin, type OriginSource } from './request-origin.js';

function received(headers: Record<string, string>, socket: OriginSource['socket'] = { localAddress: '10.0.0.5', localPort: 8080 }): OriginSource {
  return { protocol: 'http', get: (name) => headers[name] ?? '', socket };
}

describe('requestOrigin', () => {
  it('is the socket scheme and the Host header when no proxy is trusted, whatever X-Forwarded-* say', () => {
    const request = received({ host: 'relay.internal:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' });
    expect(requestOrigin(request, 0)).to.equal('http://relay.internal:8080');
  });

  it('takes the value the trusted proxy appended, the N-th from the end', () => {
    const request = received({ host: 'relay.internal', 'x-forwarded-proto': 'http, https', 'x-forwarded-host': 'evil.example, hooks.example.com' });
    expect(requestOrigin(request, 1)).to.equal('https://hooks.example.com');
    const twoProxies = received({ host: 'relay.internal', 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'hooks.example.com, lb.internal' });
    expect(requestOrigin(twoProxies, 2)).to.equal('https://hooks.example.com');
  });

  it('takes the only value of a proxy that overwrites, even with more proxies trusted', () => {
    expect(requestOrigin(received({ host: 'x', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'hooks.example.com' }), 3)).to.equal('https://hooks.example.com');
  });

  it('falls back past values that are no scheme or host', () => {
    const request = received({ host: 'relay.example.com', 'x-forwarded-proto': 'javascript', 'x-forwarded-host': 'a/b@c' });
    expect(requestOrigin(request, 1)).to.equal('http://relay.example.com');
  });

  it('names the address the request arrived at when the Host is unusable', () => {
    expect(requestOrigin(received({ host: 'bad host/../x' }), 0)).to.equal('http://10.0.0.5:8080');
    expect(requestOrigin(received({}, { localAddress: '::1', localPort: 9000 }), 0)).to.equal('http://[::1]:9000');
  });

  it('keeps IPv6 hosts and ports as sent', () => {
    expect(requestOrigin(received({ host: '[2001:db8::1]:8443' }), 0)).to.equal('http://[2001:db8::1]:8443');
  });
});
