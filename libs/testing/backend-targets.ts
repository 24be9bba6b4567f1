import type { Context } from 'mocha';
import { kafkaClusterFor } from './kafka-target.js';
import { STORE_TARGETS, type StoreTarget } from './store-targets.js';

/** Environment for `loadConfig` that puts a relay on one pair of backends. */
export interface BackendLocation {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export interface BackendTarget {
  name: string;
  prepare(this: void, mocha: Context): Promise<BackendLocation>;
}

const [sqlite, postgres] = STORE_TARGETS as [(typeof STORE_TARGETS)[0], (typeof STORE_TARGETS)[1]];

const STORE_NAMES = { sqlite: 'SQLite', postgres: 'PostgreSQL' } as const;

/** The embedded log (the default broker) beside either store: for what depends on the store, not the broker. */
export function embeddedLogOn(store: StoreTarget): BackendTarget {
  return {
    name: `embedded log + ${STORE_NAMES[store.name]}`,
    async prepare(mocha) {
      const location = await store.prepare(mocha);
      return { env: { RELAY_DATA_DIR: location.dataDir, ...(location.databaseUrl ? { DATABASE_URL: location.databaseUrl } : {}) }, cleanup: location.cleanup };
    },
  };
}

const embeddedSqlite = embeddedLogOn(sqlite);

export { MOCK_FETCH_WAIT_MS } from './kafka-target.js';

/**
 * Kafka (the real cluster of `npm run kafka:up` or KAFKA_BROKERS, mandatory on CI; else locally the
 * librdkafka mock) beside PostgreSQL. Each prepare has a topic prefix of its own, deleted at cleanup.
 */
const kafkaPostgres: BackendTarget = {
  name: 'Kafka + PostgreSQL',
  async prepare(mocha) {
    const kafka = await kafkaClusterFor(mocha);
    const store = await postgres.prepare(mocha).catch(async (error: unknown) => {
      await kafka.cleanup();
      throw error;
    });
    return {
      env: { RELAY_DATA_DIR: store.dataDir, DATABASE_URL: store.databaseUrl!, ...kafka.env },
      cleanup: async () => {
        await kafka.cleanup();
        await store.cleanup();
      },
    };
  },
};

export const BACKEND_TARGETS: readonly BackendTarget[] = [embeddedSqlite, kafkaPostgres];

/** Runs the same end-to-end suite on the embedded default and on Kafka + PostgreSQL. */
export function describeEachBackend(title: string, suite: (target: BackendTarget) => void): void {
  for (const target of BACKEND_TARGETS) {
    describe(`${title} [${target.name}]`, function () {
      suite(target);
    });
  }
}
