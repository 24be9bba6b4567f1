import { expect } from 'chai';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { apiClient, type ApiCall } from '../../testing/api-client.js';
import { STORE_TARGETS, type StoreLocation } from '../../libs/testing/store-targets.js';
import { created } from '../../testing/api-harness.js';
import { startRelay, type RunningRelay } from '../relay/relay.js';
import { expectRefused } from '../../testing/ingest-harness.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

const API_KEY = 'test-key-trusted-proxy-0001';
// The address filter does not touch the store: one backend is enough.
const sqlite = STORE_TARGETS.find((target) => target.name === 'sqlite')!;

describe('Ingest IP filter behind a trusted proxy (RELAY_TRUST_PROXY=1) [sqlite]', () => {
  let location: StoreLocation & { cleanup(): Promise<void> };
  let relay: RunningRelay;
  let api: ApiCall;
  let ingest: ApiCall;
  let slugCount = 0;

  before(async function () {
    location = await sqlite.prepare(this);
    const config = loadConfig({
      ...TEST_RELAY_ENV,
      PORT: '0',
      HOST: '127.0.0.1',
      RELAY_DATA_DIR: location.dataDir,
      RELAY_API_KEY: API_KEY,
      RELAY_ORG: 'org-proxy',
      RELAY_TRUST_PROXY: '1',
    });
    relay = await startRelay(config, { logger: createLogger({ level: 'silent' }) });
    api = apiClient(relay.url, API_KEY);
    ingest = apiClient(relay.url, null);
  });

  after(async () => {
    await relay?.close();
    await location?.cleanup();
  });

  async function createSource(settings: Record<string, unknown>): Promise<{ id: string; path: string }> {
    const slug = `proxied-${++slugCount}`;
    const { id } = await created(api, '/api/sources', { name: 'Proxied', slug, ...settings });
    return { id, path: `/ingest/org-proxy/${slug}` };
  }

  let counter = 0;
  const send = (path: string, forwardedFor?: string) =>
    ingest('POST', path, {
      rawBody: JSON.stringify({ n: `${Date.now()}-${++counter}` }),
      headers: { 'content-type': 'application/json', ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
    });

  describe('allowlist of an IPv4 CIDR, an IPv6 CIDR and a single IPv6 address', () => {
    let path: string;

    before(async () => {
      ({ path } = await createSource({ ipFilterMode: 'allowlist', ipAllowlist: ['203.0.113.0/24', '2001:db8::/32', '2001:db9::7'] }));
    });

    const cases: Array<[string, string | undefined, boolean]> = [
      ['an IPv4 address inside the CIDR', '203.0.113.9', true],
      ['an IPv4 address outside it', '198.51.100.1', false],
      ['an IPv6 address inside the IPv6 CIDR', '2001:db8::5', true],
      ['an IPv6 address outside it', '2001:dead::1', false],
      ['the single listed IPv6 address', '2001:db9::7', true],
      ['an IPv4-mapped IPv6 form of an allowed IPv4 address', '::ffff:203.0.113.9', true],
      ['an allowed address with a port, as some proxies write it', '203.0.113.9:51234', true],
      ['a forged allowed first hop before the hop the proxy appended', '203.0.113.9, 198.51.100.1', false],
      ['no X-Forwarded-For at all (the proxy itself, 127.0.0.1, is the peer)', undefined, false],
    ];
    for (const [title, forwardedFor, allowed] of cases) {
      it(`${allowed ? 'accepts' : 'refuses with 403 IP_NOT_ALLOWED'} ${title}`, async () => {
        const response = await send(path, forwardedFor);
        if (allowed) expect(response.status, response.text).to.equal(200);
        else expectRefused(response, 403, 'IP_NOT_ALLOWED');
      });
    }
  });

  describe('denylist of an IPv4 address and an IPv6 CIDR', () => {
    let path: string;

    before(async () => {
      ({ path } = await createSource({ ipFilterMode: 'denylist', ipDenylist: ['198.51.100.1', '2001:db8::/48'] }));
    });

    const cases: Array<[string, string, boolean]> = [
      ['the denied IPv4 address', '198.51.100.1', false],
      ['an IPv6 address inside the denied CIDR', '2001:db8:0:1::1', false],
      ['an IPv6 address outside it', '2001:db8:1::1', true],
      ['another IPv4 address', '198.51.100.2', true],
      ['a denied address behind a forged allowed first hop', '198.51.100.2, 198.51.100.1', false],
      ['a hop that is no address at all (it cannot be shown to be outside the list)', 'unknown', false],
    ];
    for (const [title, forwardedFor, allowed] of cases) {
      it(`${allowed ? 'accepts' : 'refuses with 403 IP_NOT_ALLOWED'} ${title}`, async () => {
        const response = await send(path, forwardedFor);
        if (allowed) expect(response.status, response.text).to.equal(200);
        else expectRefused(response, 403, 'IP_NOT_ALLOWED');
      });
    }
  });

  it('records the forwarded client address on the stored event', async () => {
    const { id, path } = await createSource({});
    const response = await send(path, '2001:db8::42');
    expect(response.status).to.equal(200);
    const rows = await waitFor(
      'the event stored',
      () => relay.store.sql.all<{ client_ip: string }>('SELECT client_ip FROM events WHERE source_id = ?', [id]),
      (stored) => stored.length > 0,
      5000,
      10,
    );
    expect(rows.map((row) => row.client_ip)).to.deep.equal(['2001:db8::42']);
  });
});
