import type { Context } from 'mocha';
import { kcatAvailable, startKafkaMock } from './kafka-mock.js';
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

/**
 * The fetch wait of relays on the mock cluster: short, since the mock holds a fetch that finds no records
 * for the whole wait even when records arrive meanwhile, so each hop's latency varies by up to one wait.
 */
export const MOCK_FETCH_WAIT_MS = 100;

const kafkaPostgres: BackendTarget = {
  name: 'Kafka mock cluster + PostgreSQL',
  async prepare(mocha) {
    if (!kcatAvailable()) {
      // On CI the Kafka-mock suites are mandatory: a missing kcat is a failure, not a skip.
      if (process.env.CI === 'true') throw new Error('kcat is required when CI=true (apt-get install -y kcat)');
      console.log('      skipped: kcat (librdkafka mock cluster) is not installed');
      mocha.skip();
    }
    const store = await postgres.prepare(mocha);
    const kafka = await startKafkaMock();
    return {
      env: { RELAY_DATA_DIR: store.dataDir, DATABASE_URL: store.databaseUrl!, KAFKA_BROKERS: kafka.brokers.join(','), KAFKA_MAX_WAIT_MS: String(MOCK_FETCH_WAIT_MS), KAFKA_SESSION_TIMEOUT_MS: '6000' },
      cleanup: async () => {
        await kafka.stop();
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
