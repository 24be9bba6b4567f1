import { sign } from '@octokit/webhooks-methods';
import { expect } from 'chai';
import { verifySignature } from './verify-signature.js';
import type { HeaderMap } from './header-map.js';

const SECRET = 'codehost-secret';
const BODY = JSON.stringify({ action: 'opened', pull_request: { number: 7 } });
const NOW = Date.UTC(2025, 0, 15, 12);

function verify(secret: string, body: string, headers: HeaderMap) {
  return verifySignature({ config: { type: 'codehost', secret }, rawBody: Buffer.from(body), headers, publicUrl: 'https://relay.test/ingest/acme/gh', nowMs: NOW });
}

describe('verifySignature codehost', () => {
  it('accepts a body signed by @octokit/webhooks-methods', async () => {
    expect(verify(SECRET, BODY, { 'x-hub-signature-256': await sign(SECRET, BODY) })).to.deep.equal({ valid: true });
  });

  it("accepts the provider's documented example (secret \"It's a Secret to Everybody\", body \"Hello, World!\")", () => {
    const header = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    expect(verify("It's a Secret to Everybody", 'Hello, World!', { 'x-hub-signature-256': header }).valid).to.equal(true);
  });

  it('accepts the hex digest in upper case', async () => {
    const header = await sign(SECRET, BODY);
    expect(verify(SECRET, BODY, { 'x-hub-signature-256': `sha256=${header.slice(7).toUpperCase()}` }).valid).to.equal(true);
  });

  it('when one byte of the body changed, answers mismatch', async () => {
    const header = await sign(SECRET, BODY);
    expect(verify(SECRET, BODY.replace('7', '8'), { 'x-hub-signature-256': header })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when signed with another secret, answers mismatch', async () => {
    expect(verify(SECRET, BODY, { 'x-hub-signature-256': await sign('other-secret', BODY) })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when the signature header is absent, answers missing_header', () => {
    expect(verify(SECRET, BODY, { 'content-type': 'application/json' })).to.deep.equal({ valid: false, reason: 'missing_header' });
  });

  it('when the header lacks the sha256= prefix (e.g. the legacy sha1 header form), answers malformed_header', async () => {
    const header = await sign(SECRET, BODY);
    expect(verify(SECRET, BODY, { 'x-hub-signature-256': `sha1=${header.slice(7)}` })).to.deep.equal({ valid: false, reason: 'malformed_header' });
  });

  it('when the signature is truncated, answers mismatch without throwing', async () => {
    const header = await sign(SECRET, BODY);
    expect(verify(SECRET, BODY, { 'x-hub-signature-256': header.slice(0, 20) })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('after the secret is rotated, a signature made with the old secret no longer validates', async () => {
    const rotated = 'codehost-secret-rotated';
    expect(verify(rotated, BODY, { 'x-hub-signature-256': await sign(SECRET, BODY) }).valid).to.equal(false);
    expect(verify(rotated, BODY, { 'x-hub-signature-256': await sign(rotated, BODY) }).valid).to.equal(true);
  });
});
