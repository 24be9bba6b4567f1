import { sign as signCodehost } from '@octokit/webhooks-methods';
import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import twilio from 'twilio';
import { generateSigningSecret } from '../../libs/secrets/signing-secret.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { expectNothingPublished, expectRefused, startIngestHarness, type IngestHarness } from '../../testing/ingest-harness.js';

/** The URL the providers are configured with: the harness's RELAY_PUBLIC_URL plus the ingest path. */
const PUBLIC_URL = 'https://relay.example.test';
const STALE_SECONDS = 600;

interface SignContext {
  /** The public URL of the source, without query. */
  url: string;
  timestampSeconds: number;
}

/** What to send: the signature headers and, for signatures that cover the URL, a query to add to it. */
interface Signed {
  headers: Record<string, string>;
  query?: string;
}

interface Signer {
  title: string;
  verificationConfig(secret: string): Record<string, unknown>;
  contentType: string;
  /** A body no earlier request sent, so the identical-payload rule never answers `duplicate`. */
  body(): string;
  /** Another body: a tampered copy of `body`. */
  tamper(body: string): string;
  sign(secret: string, body: string, context: SignContext): Signed | Promise<Signed>;
  /** Whether the signature covers a timestamp (stale requests are then refused). */
  timestamped: boolean;
}

const stripe = new Stripe('sk_test_ingest');
let counter = 0;
const unique = () => `${Date.now()}${++counter}`;
const json = (value: unknown) => JSON.stringify(value);
const nowSeconds = () => Math.floor(Date.now() / 1000);
const base64Hmac = (algorithm: string, secret: string, body: string) => createHmac(algorithm, secret).update(body).digest('base64');
const tamperJson = (body: string) => body.replace('}', ',"tampered":true}');

const twilioFormParams = (body: string) => Object.fromEntries(new URLSearchParams(body));

const SIGNERS: Signer[] = [
  {
    title: 'codehost (@octokit/webhooks-methods sign)',
    verificationConfig: (secret) => ({ type: 'codehost', secret }),
    contentType: 'application/json',
    body: () => json({ action: 'opened', pull_request: { number: unique() } }),
    tamper: tamperJson,
    sign: async (secret, body) => ({ headers: { 'X-Hub-Signature-256': await signCodehost(secret, body), 'X-GitHub-Event': 'pull_request' } }),
    timestamped: false,
  },
  {
    title: 'payments (stripe webhooks.generateTestHeaderString)',
    verificationConfig: (secret) => ({ type: 'payments', secret }),
    contentType: 'application/json; charset=utf-8',
    body: () => json({ id: `evt_${unique()}`, object: 'event', type: 'payment_intent.succeeded' }),
    tamper: (body) => body.replace('succeeded', 'failed'),
    sign: (secret, payload, { timestampSeconds }) => ({
      headers: { 'Stripe-Signature': stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: timestampSeconds }) },
    }),
    timestamped: true,
  },
  {
    title: 'chat (HMAC v0 with X-Slack-Request-Timestamp)',
    verificationConfig: (secret) => ({ type: 'chat', secret }),
    contentType: 'application/json',
    body: () => json({ type: 'event_callback', event_id: `Ev${unique()}`, event: { type: 'message', text: 'hi' } }),
    tamper: tamperJson,
    sign: (secret, body, { timestampSeconds }) => ({
      headers: {
        'X-Slack-Signature': `v0=${createHmac('sha256', secret).update(`v0:${timestampSeconds}:${body}`).digest('hex')}`,
        'X-Slack-Request-Timestamp': String(timestampSeconds),
      },
    }),
    timestamped: true,
  },
  {
    title: 'commerce (HMAC-SHA256 base64 in X-Shopify-Hmac-Sha256)',
    verificationConfig: (secret) => ({ type: 'commerce', secret }),
    contentType: 'application/json',
    body: () => json({ id: Number(unique()), email: 'jon@doe.ca', total_price: '10.00' }),
    tamper: (body) => body.replace('10.00', '0.01'),
    sign: (secret, body) => ({ headers: { 'X-Shopify-Hmac-Sha256': base64Hmac('sha256', secret, body), 'X-Shopify-Topic': 'orders/create' } }),
    timestamped: false,
  },
  {
    title: 'telecom, form body (twilio getExpectedTwilioSignature)',
    verificationConfig: (secret) => ({ type: 'telecom', secret }),
    contentType: 'application/x-www-form-urlencoded',
    body: () => new URLSearchParams({ MessageSid: `SM${unique()}`, From: '+15550001111', To: '+15550002222', Body: 'Hello & welcome' }).toString(),
    tamper: (body) => body.replace('welcome', 'goodbye'),
    sign: (secret, body, { url }) => ({ headers: { 'X-Twilio-Signature': twilio.getExpectedTwilioSignature(secret, url, twilioFormParams(body)) } }),
    timestamped: false,
  },
  {
    title: 'telecom, JSON body with bodySHA256 (twilio getExpectedTwilioSignature)',
    verificationConfig: (secret) => ({ type: 'telecom', secret }),
    contentType: 'application/json',
    body: () => json({ CallSid: `CA${unique()}`, CallStatus: 'completed' }),
    tamper: (body) => body.replace('completed', 'failed'),
    sign: (secret, body, { url }) => {
      const query = `?bodySHA256=${twilio.getExpectedBodyHash(body)}`;
      return { headers: { 'X-Twilio-Signature': twilio.getExpectedTwilioSignature(secret, `${url}${query}`, {}) }, query };
    },
    timestamped: false,
  },
  {
    title: 'standard (standardwebhooks Webhook.sign)',
    verificationConfig: (secret) => ({ type: 'standard', secret }),
    contentType: 'application/json',
    body: () => json({ type: 'invoice.paid', data: { id: `inv_${unique()}` } }),
    tamper: tamperJson,
    sign: (secret, body, { timestampSeconds }) => {
      const id = `msg_${unique()}`;
      return {
        headers: {
          'webhook-id': id,
          'webhook-timestamp': String(timestampSeconds),
          'webhook-signature': new Webhook(secret).sign(id, new Date(timestampSeconds * 1000), body),
        },
      };
    },
    timestamped: true,
  },
  {
    title: 'hmac (sha512, base64, header X-Signature, prefix v1=)',
    verificationConfig: (secret) => ({ type: 'hmac', secret, algorithm: 'sha512', header: 'X-Signature', encoding: 'base64', prefix: 'v1=' }),
    contentType: 'text/plain; charset=utf-8',
    body: () => `order ${unique()} shipped`,
    tamper: (body) => body.replace('shipped', 'lost'),
    sign: (secret, body) => ({ headers: { 'X-Signature': `v1=${base64Hmac('sha512', secret, body)}` } }),
    timestamped: false,
  },
];

describeEachStore('Ingest signature verification', (target) => {
  let h: IngestHarness;
  /** The gateway's clock, held at an instant while a test sends at it. */
  let heldAt: number | undefined;

  before(async function () {
    h = await startIngestHarness(this, target, { gatewayClock: () => heldAt ?? Date.now() });
  });

  after(async () => {
    await h?.stop();
  });

  for (const signer of SIGNERS) {
    describe(signer.title, () => {
      interface TestSource {
        id: string;
        slug: string;
        secret: string;
      }

      async function createSource(rejectInvalidSignatures: boolean): Promise<TestSource> {
        const secret = generateSigningSecret();
        const { id, slug } = await h.createUniqueSource({ name: signer.title, provider: 'custom', verificationConfig: signer.verificationConfig(secret), rejectInvalidSignatures });
        return { id, slug, secret };
      }

      /** Signs `signedBody` with `secret` as the provider would, then sends `sentBody`. */
      async function send(source: TestSource, options: { secret?: string; signedBody: string; sentBody?: string; timestampSeconds?: number; omitSignature?: boolean }) {
        const url = `${PUBLIC_URL}/ingest/org-a/${source.slug}`;
        const signed = await signer.sign(options.secret ?? source.secret, options.signedBody, { url, timestampSeconds: options.timestampSeconds ?? nowSeconds() });
        const headers = { 'content-type': signer.contentType, ...(options.omitSignature ? {} : signed.headers) };
        return h.ingest(`/ingest/org-a/${source.slug}${signed.query ?? ''}`, { rawBody: options.sentBody ?? options.signedBody, headers });
      }

      let strict: TestSource;
      let lenient: TestSource;

      before(async () => {
        strict = await createSource(true);
        lenient = await createSource(false);
      });

      it('accepts a webhook signed by the provider library and stores it byte-exact with signatureValid true', async () => {
        for (const source of [strict, lenient]) {
          const body = signer.body();
          const response = await send(source, { signedBody: body });
          expect(response.status, response.text).to.equal(200);
          expect(response.body).to.deep.equal({ eventId: response.body.eventId, status: 'received' });
          const stored = (await h.events(source.id)).find((event) => event.id === response.body.eventId);
          expect(stored, 'stored event').to.not.equal(undefined);
          expect(stored!.signatureValid).to.equal(true);
          expect(stored!.payload.equals(Buffer.from(body))).to.equal(true);
        }
      });

      it('accepts the previous secret for exactly the grace after a rotation with graceSeconds, and drops the oldest on a second rotation', async () => {
        const source = await createSource(true);
        const rotate = async () => {
          const rotated = await h.api.api('POST', `/api/sources/${source.id}/rotate-secret`, { body: { graceSeconds: 60 } });
          expect(rotated.status, rotated.text).to.equal(200);
          return { secret: rotated.body.verificationConfig.secret as string, expiresAt: Date.parse(rotated.body.previousSecretExpiresAt) };
        };
        /** The status of a webhook signed with `secret` and received at `ms` by the gateway's clock. */
        const statusAt = async (ms: number, secret: string) => {
          heldAt = ms;
          try {
            return (await send(source, { secret, signedBody: signer.body(), timestampSeconds: Math.floor(ms / 1000) })).status;
          } finally {
            heldAt = undefined;
          }
        };
        const first = source.secret;
        const second = await rotate();
        expect([await statusAt(second.expiresAt - 1, first), await statusAt(second.expiresAt - 1, second.secret)]).to.deep.equal([200, 200]);
        expect([await statusAt(second.expiresAt, first), await statusAt(second.expiresAt, second.secret)]).to.deep.equal([400, 200]);
        const third = await rotate();
        const during = third.expiresAt - 1;
        expect([await statusAt(during, first), await statusAt(during, second.secret), await statusAt(during, third.secret)]).to.deep.equal([400, 200, 200]);
      });

      const failures: Array<{ title: string; request: (source: TestSource, body: string) => Promise<Awaited<ReturnType<typeof send>>> }> = [
        { title: 'a tampered body', request: (source, body) => send(source, { signedBody: body, sentBody: signer.tamper(body) }) },
        { title: 'a signature made with another secret', request: (source, body) => send(source, { signedBody: body, secret: generateSigningSecret() }) },
        { title: 'a missing signature header', request: (source, body) => send(source, { signedBody: body, omitSignature: true }) },
      ];
      if (signer.timestamped) {
        failures.push({
          title: `a timestamp ${STALE_SECONDS} s old (tolerance 300 s)`,
          request: (source, body) => send(source, { signedBody: body, timestampSeconds: nowSeconds() - STALE_SECONDS }),
        });
      }

      for (const failure of failures) {
        it(`with rejectInvalidSignatures true, refuses ${failure.title} with 400 INVALID_SIGNATURE and stores nothing`, async () => {
          const body = signer.body();
          const response = await expectNothingPublished(h, () => failure.request(strict, body));
          expectRefused(response, 400, 'INVALID_SIGNATURE');
          expect(response.body.error).to.equal('Bad Request');
        });

        it(`with rejectInvalidSignatures false, accepts ${failure.title} and stores it with signatureValid false`, async () => {
          const body = signer.body();
          const response = await failure.request(lenient, body);
          expect(response.status, response.text).to.equal(200);
          expect(response.body.status).to.equal('received');
          const stored = (await h.events(lenient.id)).find((event) => event.id === response.body.eventId);
          expect(stored, 'stored event').to.not.equal(undefined);
          expect(stored!.signatureValid).to.equal(false);
        });
      }

      it('after rotate-secret, refuses the old secret on the very next request and accepts the new one', async () => {
        const source = await createSource(true);
        // Warm the gateway's source cache with the old secret first: rotation must invalidate it.
        expect((await send(source, { signedBody: signer.body() })).status).to.equal(200);
        const rotated = await h.api.api('POST', `/api/sources/${source.id}/rotate-secret`);
        expect(rotated.status, rotated.text).to.equal(200);
        const newSecret: string = rotated.body.verificationConfig.secret;
        expect(newSecret).to.be.a('string').and.not.equal(source.secret);

        const old = await expectNothingPublished(h, () => send(source, { signedBody: signer.body() }));
        expectRefused(old, 400, 'INVALID_SIGNATURE');
        const fresh = await send(source, { signedBody: signer.body(), secret: newSecret });
        expect(fresh.status, fresh.text).to.equal(200);
        expect(fresh.body.status).to.equal('received');
      });
    });
  }
});
