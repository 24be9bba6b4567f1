import { expect } from 'chai';
import twilio from 'twilio';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { apiClient, type ApiCall } from '../../testing/api-client.js';
import { startForwardingProxy, type ForwardingProxy } from '../../libs/testing/forwarding-proxy.js';
import { describeEachStore, type StoreTarget } from '../../libs/testing/store-targets.js';
import { created } from '../../testing/api-harness.js';
import { startRelay, type RunningRelay } from '../relay/relay.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

const API_KEY = 'test-key-public-url-0001';
const AUTH_TOKEN = 'telecom-auth-token-0123456789abcdef';
const PUBLIC_HOST = 'hooks.example.test';
const CONFIGURED_URL = 'https://relay.configured.test';

/** A relay with RELAY_TRUST_PROXY=1 behind a real proxy that terminates https for PUBLIC_HOST. */
async function startBehindProxy(mocha: Mocha.Context, target: StoreTarget, env: Record<string, string> = {}) {
  const location = await target.prepare(mocha);
  const relay = await startRelay(
    loadConfig({
      ...TEST_RELAY_ENV,
      PORT: '0',
      HOST: '127.0.0.1',
      RELAY_DATA_DIR: location.dataDir,
      DATABASE_URL: location.databaseUrl,
      RELAY_API_KEY: API_KEY,
      RELAY_ORG: 'org-proxy',
      RELAY_TRUST_PROXY: '1',
      ...env,
    }),
    { logger: createLogger({ level: 'silent' }) },
  );
  const proxy = await startForwardingProxy(relay.url, { proto: 'https', host: PUBLIC_HOST });
  return {
    relay,
    proxy,
    async stop() {
      await proxy.close();
      await relay.close();
      await location.cleanup();
    },
  };
}

let sent = 0;

/** A telecom webhook as the provider sends it: the form body signed over the URL it was configured with. */
function sendTelecom(ingest: ApiCall, path: string, signedUrl: string, headers: Record<string, string> = {}) {
  // A new message each time: an accepted repeat would be answered as a duplicate.
  const form = { MessageSid: `SM${++sent}`, From: '+15550001111', Body: 'Hello' };
  return ingest('POST', path, {
    rawBody: new URLSearchParams(form).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, signedUrl, form),
      ...headers,
    },
  });
}

async function createTelecomSource(api: ApiCall, slug: string): Promise<{ webhookUrl: string }> {
  return created(api, '/api/sources', {
    name: slug,
    slug,
    verificationConfig: { type: 'telecom', secret: AUTH_TOKEN },
    rejectInvalidSignatures: true,
  });
}

describeEachStore('The public URL without RELAY_PUBLIC_URL, behind a trusted proxy', (target) => {
  let setup: Awaited<ReturnType<typeof startBehindProxy>>;
  let viaProxy: ApiCall;
  let direct: ApiCall;
  const path = '/ingest/org-proxy/sms';

  before(async function () {
    setup = await startBehindProxy(this, target);
    viaProxy = apiClient(setup.proxy.url, API_KEY);
    direct = apiClient(setup.relay.url, API_KEY);
    await createTelecomSource(direct, 'sms');
  });

  after(async () => {
    await setup?.stop();
  });

  it('shows webhookUrl with the scheme and host the caller used (X-Forwarded-Proto/-Host through the proxy)', async () => {
    const source = (await viaProxy('GET', '/api/sources?search=sms')).body.data[0];
    expect(source.webhookUrl).to.equal(`https://${PUBLIC_HOST}${path}`);
  });

  it('shows webhookUrl with the request Host when called directly', async () => {
    const source = (await direct('GET', '/api/sources')).body.data[0];
    expect(source.webhookUrl).to.equal(`${setup.relay.url}${path}`);
  });

  it('accepts a telecom signature made over the public https URL, query included', async () => {
    const ingest = apiClient(setup.proxy.url, null);
    const response = await sendTelecom(ingest, `${path}?tenant=a`, `https://${PUBLIC_HOST}${path}?tenant=a`);
    expect(response.status, response.text).to.equal(200);
  });

  it('refuses a signature over the internal address the proxy forwards to', async () => {
    const ingest = apiClient(setup.proxy.url, null);
    const response = await sendTelecom(ingest, path, `${setup.relay.url}${path}`);
    expect(response.status).to.equal(400);
    expect(response.body.code).to.equal('INVALID_SIGNATURE');
  });

  it("ignores a client's own X-Forwarded-Host in front of the trusted proxy", async () => {
    const ingest = apiClient(setup.proxy.url, null);
    const forged = 'attacker.example';
    const refused = await sendTelecom(ingest, path, `https://${forged}${path}`, { 'x-forwarded-host': forged, 'x-forwarded-proto': 'http' });
    expect(refused.status).to.equal(400);
    const accepted = await sendTelecom(ingest, path, `https://${PUBLIC_HOST}${path}`, { 'x-forwarded-host': forged, 'x-forwarded-proto': 'http' });
    expect(accepted.status, accepted.text).to.equal(200);
  });
});

describeEachStore('The public URL with RELAY_PUBLIC_URL set, behind a trusted proxy', (target) => {
  let setup: Awaited<ReturnType<typeof startBehindProxy>>;
  let viaProxy: ApiCall;
  const path = '/ingest/org-proxy/voice';

  before(async function () {
    setup = await startBehindProxy(this, target, { RELAY_PUBLIC_URL: CONFIGURED_URL });
    viaProxy = apiClient(setup.proxy.url, API_KEY);
    await createTelecomSource(viaProxy, 'voice');
  });

  after(async () => {
    await setup?.stop();
  });

  it('shows webhookUrl under RELAY_PUBLIC_URL whatever the request says', async () => {
    const source = (await viaProxy('GET', '/api/sources')).body.data[0];
    expect(source.webhookUrl).to.equal(`${CONFIGURED_URL}${path}`);
  });

  it('checks telecom signatures against RELAY_PUBLIC_URL, not the forwarded host', async () => {
    const ingest = apiClient(setup.proxy.url, null);
    expect((await sendTelecom(ingest, path, `${CONFIGURED_URL}${path}`)).status).to.equal(200);
    expect((await sendTelecom(ingest, path, `https://${PUBLIC_HOST}${path}`)).status).to.equal(400);
  });
});
