import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { verifySignature } from './verify-signature.js';
import type { HeaderMap } from './header-map.js';

// The provider's documented example (api.slack.com/authentication/verifying-requests-from-slack).
const DOC_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const DOC_TIMESTAMP = 1531420618;
const DOC_BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const DOC_SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
const NOW = DOC_TIMESTAMP * 1000 + 5_000;

/** Signs as the provider documents; checked against the documented example below before other tests rely on it. */
function slackSignature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

function slackHeaders(signature: string, timestamp: number = DOC_TIMESTAMP): HeaderMap {
  return { 'x-slack-signature': signature, 'x-slack-request-timestamp': String(timestamp) };
}

function verify(headers: HeaderMap, options: { secret?: string; body?: string; nowMs?: number; toleranceSeconds?: number } = {}) {
  return verifySignature({
    config: { type: 'chat', secret: options.secret ?? DOC_SECRET, toleranceSeconds: options.toleranceSeconds },
    rawBody: Buffer.from(options.body ?? DOC_BODY),
    headers,
    publicUrl: 'https://relay.test/ingest/acme/slack',
    nowMs: options.nowMs ?? NOW,
  });
}

describe('verifySignature chat', () => {
  it("the test signer reproduces the provider's documented example", () => {
    expect(slackSignature(DOC_SECRET, DOC_TIMESTAMP, DOC_BODY)).to.equal(DOC_SIGNATURE);
  });

  it("accepts the provider's documented example", () => {
    expect(verify(slackHeaders(DOC_SIGNATURE))).to.deep.equal({ valid: true });
  });

  it('when the body changed, answers mismatch', () => {
    expect(verify(slackHeaders(DOC_SIGNATURE), { body: DOC_BODY.replace('foobar', 'foobaz') })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when the request-timestamp header was changed, answers mismatch (the timestamp is signed)', () => {
    expect(verify(slackHeaders(DOC_SIGNATURE, DOC_TIMESTAMP + 1))).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when verified with another secret, answers mismatch', () => {
    expect(verify(slackHeaders(DOC_SIGNATURE), { secret: '0000000000000000000000000000abcd' })).to.deep.equal({ valid: false, reason: 'mismatch' });
  });

  it('when either header is absent, answers missing_header', () => {
    expect(verify({ 'x-slack-request-timestamp': String(DOC_TIMESTAMP) })).to.deep.equal({ valid: false, reason: 'missing_header' });
    expect(verify({ 'x-slack-signature': DOC_SIGNATURE })).to.deep.equal({ valid: false, reason: 'missing_header' });
  });

  it('when the signature lacks the v0= version or the timestamp is not a number, answers malformed_header', () => {
    expect(verify(slackHeaders(DOC_SIGNATURE.replace('v0=', 'v1=')))).to.deep.equal({ valid: false, reason: 'malformed_header' });
    expect(verify({ 'x-slack-signature': DOC_SIGNATURE, 'x-slack-request-timestamp': 'yesterday' })).to.deep.equal({ valid: false, reason: 'malformed_header' });
  });

  it('refuses a request older than the 300 s default tolerance as stale', () => {
    expect(verify(slackHeaders(DOC_SIGNATURE), { nowMs: (DOC_TIMESTAMP + 300) * 1000 }).valid).to.equal(true);
    expect(verify(slackHeaders(DOC_SIGNATURE), { nowMs: (DOC_TIMESTAMP + 301) * 1000 })).to.deep.equal({ valid: false, reason: 'stale_timestamp' });
  });

  it('applies a configured toleranceSeconds', () => {
    const nowMs = (DOC_TIMESTAMP + 3600) * 1000;
    expect(verify(slackHeaders(DOC_SIGNATURE), { nowMs, toleranceSeconds: 7200 }).valid).to.equal(true);
  });

  it('after the secret is rotated, a signature made with the old secret no longer validates', () => {
    const rotated = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    expect(verify(slackHeaders(DOC_SIGNATURE), { secret: rotated }).valid).to.equal(false);
    expect(verify(slackHeaders(slackSignature(rotated, DOC_TIMESTAMP, DOC_BODY)), { secret: rotated }).valid).to.equal(true);
  });
});
