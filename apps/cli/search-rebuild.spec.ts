import { expect } from 'chai';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { searchIndexLag } from '../../libs/store/search-index.js';
import { openStore } from '../../libs/store/store.js';
import { apiClient } from '../../testing/api-client.js';
import { describeEachStore, type StoreLocation } from '../../libs/testing/store-targets.js';
import { startRelay } from '../relay/relay.js';
import { runCli } from '../../libs/testing/cli-runner.js';
import { eventsInSearchIndex, loseSearchIndex } from '../../libs/testing/store-fixtures.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

const API_KEY = 'search-rebuild-key-0123456789';

describeEachStore('relay search rebuild', (target) => {
  let location: StoreLocation & { cleanup(): Promise<void> };
  const eventIds: string[] = [];

  /** Runs `work` on the store of the data location, as a relay there would open it. */
  async function withStore<T>(work: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> {
    const store = await openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  }

  /** The events the index itself holds for `term`. */
  const inIndex = (term: string) => withStore(({ sql }) => eventsInSearchIndex(sql, term));

  before(async function () {
    this.timeout(60_000);
    location = await target.prepare(this);
    // An existing data directory: events a relay stored and indexed, then the relay stopped.
    const env = { ...TEST_RELAY_ENV, PORT: '0', HOST: '127.0.0.1', RELAY_DATA_DIR: location.dataDir, DATABASE_URL: location.databaseUrl, RELAY_API_KEY: API_KEY };
    const relay = await startRelay(loadConfig(env), { logger: createLogger({ level: 'silent' }) });
    try {
      const api = apiClient(relay.url, API_KEY);
      expect((await api('POST', '/api/sources', { body: { name: 'Shop', slug: 'shop' } })).status).to.equal(201);
      for (let i = 0; i < 3; i++) {
        const response = await api('POST', '/ingest/default/shop', { key: null, body: { order: `rebuild-order-${i}` } });
        expect(response.status, response.text).to.equal(200);
        eventIds.push(response.body.eventId);
      }
      await waitFor('three events stored and indexed', async () => ((await relay.store.sql.all('SELECT id FROM events')).length === 3 && (await searchIndexLag(relay.store.sql)) === 0 ? true : undefined), isDefined);
    } finally {
      await relay.close();
    }
  });

  after(async () => {
    await location?.cleanup();
  });

  it('rebuilds a lost index from the stored events of an existing data directory', async function () {
    this.timeout(60_000);
    await withStore(({ sql }) => loseSearchIndex(sql));
    expect(await inIndex('rebuild-order')).to.deep.equal([]);

    const result = await runCli(location, ['search', 'rebuild']);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.include('search index rebuilt from the stored events: 3 events indexed');
    expect(await inIndex('rebuild-order')).to.deep.equal([...eventIds].sort());
    expect(await inIndex('rebuild-order-1')).to.deep.equal([eventIds[1]]);
    expect(await withStore(({ sql }) => searchIndexLag(sql))).to.equal(0);
  });

  it('is listed in the usage', async () => {
    expect((await runCli(location, ['--help'])).stdout).to.include('relay search rebuild');
  });
});
