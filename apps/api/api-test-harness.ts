import type { Context } from 'mocha';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { apiClient, type ApiCall } from '../../libs/testing/api-client.js';
import type { StoreTarget } from '../../libs/testing/store-targets.js';
import { startRelay, type RunningRelay } from '../relay/relay.js';

/** A running relay on one store backend with two organizations, A and B, each with its own key. */
export interface ApiHarness {
  relay: RunningRelay;
  url: string;
  /** Calls as organization A (default key) or with `{key}` as anyone else. */
  api: ApiCall;
  keyA: string;
  keyB: string;
  /** Calls as organization B. */
  apiB: ApiCall;
  /** Stops and starts the relay over the same data (restart persistence). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

export async function startApiHarness(mocha: Context, target: StoreTarget): Promise<ApiHarness> {
  const location = await target.prepare(mocha);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    RELAY_DATA_DIR: location.dataDir,
    DATABASE_URL: location.databaseUrl,
    RELAY_API_KEY: 'test-key-org-a-0123456789',
    RELAY_ORG: 'org-a',
    RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
    RELAY_PUBLIC_URL: 'https://relay.example.test',
  });
  const logger = createLogger({ level: 'silent' });
  let relay = await startRelay(config, { logger });
  const orgB = await relay.store.organizations.create('org-b', 'pro');
  const { key: keyB } = await relay.store.organizations.createKey(orgB.id, 'test');
  const harness: ApiHarness = {
    relay,
    url: relay.url,
    api: apiClient(relay.url, config.apiKey!),
    keyA: config.apiKey!,
    keyB,
    apiB: apiClient(relay.url, keyB),
    async restart() {
      await relay.close();
      relay = await startRelay({ ...config, port: relay.port }, { logger });
      harness.relay = relay;
    },
    async stop() {
      await relay.close();
      await location.cleanup();
    },
  };
  return harness;
}
