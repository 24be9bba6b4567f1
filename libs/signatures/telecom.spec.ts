import { expect } from 'chai';
import twilio from 'twilio';
import { verifySignature } from './verify-signature.js';
import type { HeaderMap } from './header-map.js';

const AUTH_TOKEN = '12345678901234567890123456789012';
const FORM_URL = 'https://relay.test/ingest/acme/sms?tenant=a';
const FORM_PARAMS = { MessageSid: 'SM123', From: '+15550001111', To: '+15550002222', Body: 'Hello & welcome' };
const JSON_BODY = JSON.stringify({ callSid: 'CA123', status: 'completed' });

function formBody(params: Record<string, string | string[]>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) for (const v of [value].flat()) search.append(name, v);
  return search.toString();
}

/** The JSON variant: the body hash rides in the URL, and the provider signs that URL with no params. */
function jsonUrl(body: string): string {
  return `https://relay.test/ingest/acme/voice?bodySHA256=${twilio.getExpectedBodyHash(body)}`;
}

function verify(options: { headers: HeaderMap; body: string; url: string; secret?: string }) {
  return verifySignature({
    config: { type: 'telecom', secret: options.secret ?? AUTH_TOKEN },
    rawBody: Buffer.from(options.body),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
    publicUrl: options.url,
    nowMs: Date.now(),
  });
}

describe('verifySignature telecom', () => {
  describe('form bodies', () => {
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, FORM_URL, FORM_PARAMS);

    it('accepts a signature made by the twilio library over the URL and the sorted params', () => {
      expect(verify({ headers: { 'x-twilio-signature': signature }, body: formBody(FORM_PARAMS), url: FORM_URL })).to.deep.equal({ valid: true });
    });

    it('accepts the params in any order (the provider signs them sorted)', () => {
      const reordered = formBody({ Body: FORM_PARAMS.Body, To: FORM_PARAMS.To, MessageSid: FORM_PARAMS.MessageSid, From: FORM_PARAMS.From });
      expect(verify({ headers: { 'x-twilio-signature': signature }, body: reordered, url: FORM_URL }).valid).to.equal(true);
    });

    it('accepts a repeated param as the library signs it', () => {
      const params = { ...FORM_PARAMS, MediaUrl: ['https://m.test/2', 'https://m.test/1'] };
      const repeated = twilio.getExpectedTwilioSignature(AUTH_TOKEN, FORM_URL, params);
      expect(verify({ headers: { 'x-twilio-signature': repeated }, body: formBody(params), url: FORM_URL }).valid).to.equal(true);
    });

    it('accepts a signature made over the URL with the default port spelled out', () => {
      const withPort = twilio.getExpectedTwilioSignature(AUTH_TOKEN, FORM_URL.replace('relay.test', 'relay.test:443'), FORM_PARAMS);
      expect(verify({ headers: { 'x-twilio-signature': withPort }, body: formBody(FORM_PARAMS), url: FORM_URL }).valid).to.equal(true);
    });

    it('when a param value changed, answers mismatch', () => {
      const body = formBody({ ...FORM_PARAMS, Body: 'Hello & goodbye' });
      expect(verify({ headers: { 'x-twilio-signature': signature }, body, url: FORM_URL })).to.deep.equal({ valid: false, reason: 'mismatch' });
    });

    it('when the URL differs from the one signed, answers mismatch', () => {
      const url = FORM_URL.replace('tenant=a', 'tenant=b');
      expect(verify({ headers: { 'x-twilio-signature': signature }, body: formBody(FORM_PARAMS), url })).to.deep.equal({ valid: false, reason: 'mismatch' });
    });

    it('when signed with another auth token, answers mismatch', () => {
      const other = twilio.getExpectedTwilioSignature('ffffffffffffffffffffffffffffffff', FORM_URL, FORM_PARAMS);
      expect(verify({ headers: { 'x-twilio-signature': other }, body: formBody(FORM_PARAMS), url: FORM_URL })).to.deep.equal({ valid: false, reason: 'mismatch' });
    });

    it('when the header is absent, answers missing_header', () => {
      expect(verify({ headers: {}, body: formBody(FORM_PARAMS), url: FORM_URL })).to.deep.equal({ valid: false, reason: 'missing_header' });
    });

    it('when the public URL cannot be parsed, answers malformed_url', () => {
      expect(verify({ headers: { 'x-twilio-signature': signature }, body: formBody(FORM_PARAMS), url: '/ingest/acme/sms' })).to.deep.equal({ valid: false, reason: 'malformed_url' });
    });

    it('after the auth token is rotated, a signature made with the old one no longer validates', () => {
      const rotated = 'abcdefabcdefabcdefabcdefabcdefab';
      const body = formBody(FORM_PARAMS);
      expect(verify({ headers: { 'x-twilio-signature': signature }, body, url: FORM_URL, secret: rotated }).valid).to.equal(false);
      const fresh = twilio.getExpectedTwilioSignature(rotated, FORM_URL, FORM_PARAMS);
      expect(verify({ headers: { 'x-twilio-signature': fresh }, body, url: FORM_URL, secret: rotated }).valid).to.equal(true);
    });
  });

  describe('JSON bodies (bodySHA256 in the URL)', () => {
    const url = jsonUrl(JSON_BODY);
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, {});
    const headers = { 'x-twilio-signature': signature, 'content-type': 'application/json' };

    it("the fixture is valid by the twilio library's own validateRequestWithBody", () => {
      expect(twilio.validateRequestWithBody(AUTH_TOKEN, signature, url, JSON_BODY)).to.equal(true);
    });

    it('accepts a URL signature whose bodySHA256 matches the body', () => {
      expect(verify({ headers, body: JSON_BODY, url })).to.deep.equal({ valid: true });
    });

    it('when the body changed, answers body_hash_mismatch', () => {
      expect(verify({ headers, body: JSON_BODY.replace('completed', 'failed'), url })).to.deep.equal({ valid: false, reason: 'body_hash_mismatch' });
    });

    it('when the body and its bodySHA256 were both changed, answers mismatch (the URL is signed)', () => {
      const body = JSON_BODY.replace('completed', 'failed');
      expect(verify({ headers, body, url: jsonUrl(body) })).to.deep.equal({ valid: false, reason: 'mismatch' });
    });

    it('when signed with another auth token, answers mismatch', () => {
      const other = twilio.getExpectedTwilioSignature('ffffffffffffffffffffffffffffffff', url, {});
      expect(verify({ headers: { ...headers, 'x-twilio-signature': other }, body: JSON_BODY, url })).to.deep.equal({ valid: false, reason: 'mismatch' });
    });

    it('after the auth token is rotated, a signature made with the old one no longer validates', () => {
      const rotated = 'abcdefabcdefabcdefabcdefabcdefab';
      expect(verify({ headers, body: JSON_BODY, url, secret: rotated }).valid).to.equal(false);
      const fresh = twilio.getExpectedTwilioSignature(rotated, url, {});
      expect(verify({ headers: { ...headers, 'x-twilio-signature': fresh }, body: JSON_BODY, url, secret: rotated }).valid).to.equal(true);
    });
  });
});
