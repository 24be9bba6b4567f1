import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newId } from '../../libs/ids/ids.js';
import { createSecretBox, type SecretBox } from '../../libs/secrets/secret-box.js';
import { generateSigningSecret } from '../../libs/secrets/signing-secret.js';
import type { DestinationRow } from '../../libs/store/entities/destination.js';
import { openStore, type Store } from '../../libs/store/store.js';
import { destinationRow } from '../../libs/testing/store-fixtures.js';
import { createCachedLookup } from './cached-lookup.js';
import type { DeliveryLookup } from '../../libs/delivery/delivery-lookup.js';
import { createStoreDeliveryLookup } from '../../libs/delivery/store-lookup.js';

describe('delivery lookups', function () {
  let dataDir: string;
  let store: Store;
  let secrets: SecretBox;
  let orgId: string;

  before(async function () {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lookup-'));
    store = await openStore({ dataDir });
    secrets = createSecretBox(randomBytes(32));
    orgId = (await store.organizations.create('lookups', 'pro')).id;
  });

  after(async function () {
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function addDestination(authType: DestinationRow['authType'], authConfig: Record<string, string> | null) {
    return store.destinations.insert(
      destinationRow(orgId, secrets.seal(generateSigningSecret()), {
        name: 'Billing',
        slug: `billing-${randomBytes(3).toString('hex')}`,
        url: 'https://billing.example.test/hooks',
        method: 'PUT',
        headers: { 'X-Env': 'prod' },
        authType,
        authConfigSealed: authConfig ? secrets.seal(JSON.stringify(authConfig)) : null,
        timeoutMs: 10_000,
        rateLimitPerMinute: 120,
        retryPolicy: { maxRetries: 3, initialDelay: 500, maxDelay: 5000, backoffMultiplier: 3 },
      }),
    );
  }

  describe('createStoreDeliveryLookup', function () {
    it('opens the sealed credentials and signing secret into the delivery settings', async function () {
      const row = await addDestination('api_key', { headerName: 'X-Api-Key', key: 'k-123' });
      const target = await createStoreDeliveryLookup(store, secrets).destination(orgId, row.id);
      expect(target).to.deep.include({ id: row.id, orgId, enabled: true, timeoutMs: 10_000, rateLimitPerMinute: 120, retryPolicy: row.retryPolicy });
      expect(target!.destination).to.deep.include({
        authType: 'api_key',
        authConfig: { headerName: 'X-Api-Key', key: 'k-123' },
        url: row.url,
        method: 'PUT',
        headers: { 'X-Env': 'prod' },
      });
      expect(target!.destination.signingSecret).to.equal(secrets.open(row.signingSecretSealed));
    });

    it('reads basic and custom header credentials', async function () {
      const lookup = createStoreDeliveryLookup(store, secrets);
      const basic = await addDestination('basic', { username: 'relay', password: 'pw' });
      const custom = await addDestination('custom_header', { headerName: 'X-Token', headerValue: 'v' });
      expect((await lookup.destination(orgId, basic.id))!.destination).to.deep.include({ authType: 'basic', authConfig: { username: 'relay', password: 'pw' } });
      expect((await lookup.destination(orgId, custom.id))!.destination).to.deep.include({
        authType: 'custom_header',
        authConfig: { headerName: 'X-Token', headerValue: 'v' },
      });
    });

    it('sends without an auth header when the credentials are missing (imported redacted)', async function () {
      const row = await addDestination('bearer', null);
      const target = await createStoreDeliveryLookup(store, secrets).destination(orgId, row.id);
      expect(target!.destination.authType).to.equal('none');
    });

    it('answers null for a destination of another organization or one that does not exist', async function () {
      const row = await addDestination('none', null);
      const lookup = createStoreDeliveryLookup(store, secrets);
      expect(await lookup.destination(newId('org'), row.id)).to.equal(null);
      expect(await lookup.destination(orgId, newId('dst'))).to.equal(null);
    });
  });

  describe('createCachedLookup', function () {
    /** The store lookup, counting the destination reads that reach it. */
    function countingLookup(): DeliveryLookup & { reads: number } {
      const inner = createStoreDeliveryLookup(store, secrets);
      const counted = {
        reads: 0,
        destination: (org: string, id: string) => {
          counted.reads += 1;
          return inner.destination(org, id);
        },
        sourceSlug: inner.sourceSlug,
      };
      return counted;
    }

    it('reads a destination once for many jobs, including concurrent ones', async function () {
      const row = await addDestination('none', null);
      const inner = countingLookup();
      const lookup = createCachedLookup(inner);
      const targets = await Promise.all([lookup.destination(orgId, row.id), lookup.destination(orgId, row.id)]);
      await lookup.destination(orgId, row.id);
      expect(targets.map((target) => target!.id)).to.deep.equal([row.id, row.id]);
      expect(inner.reads).to.equal(1);
    });

    it('keeps a missing destination as missing, so a deleted destination backlog does not read the store per job', async function () {
      const inner = countingLookup();
      const lookup = createCachedLookup(inner);
      const missing = newId('dst');
      expect(await lookup.destination(orgId, missing)).to.equal(null);
      expect(await lookup.destination(orgId, missing)).to.equal(null);
      expect(inner.reads).to.equal(1);
    });

    it('reads again after the destination is invalidated, and after the time to live', async function () {
      const row = await addDestination('none', null);
      let clock = 1_000;
      const inner = countingLookup();
      const lookup = createCachedLookup(inner, { ttlMs: 500, now: () => clock });
      await lookup.destination(orgId, row.id);
      await store.destinations.update(orgId, row.id, { enabled: false });
      expect((await lookup.destination(orgId, row.id))!.enabled).to.equal(true);

      lookup.invalidate(row.id);
      expect((await lookup.destination(orgId, row.id))!.enabled).to.equal(false);
      expect(inner.reads).to.equal(2);
      clock += 500;
      await lookup.destination(orgId, row.id);
      expect(inner.reads).to.equal(3);
    });

    it('does not keep a load that an invalidation overtook', async function () {
      const row = await addDestination('none', null);
      const inner = countingLookup();
      const lookup = createCachedLookup(inner);
      const loading = lookup.destination(orgId, row.id);
      lookup.invalidate(row.id);
      await loading;
      await lookup.destination(orgId, row.id);
      expect(inner.reads).to.equal(2);
    });

    it('does not hand a cached destination to a job naming another organization', async function () {
      const row = await addDestination('none', null);
      const lookup = createCachedLookup(countingLookup());
      await lookup.destination(orgId, row.id);
      expect(await lookup.destination(newId('org'), row.id)).to.equal(null);
    });
  });
});
