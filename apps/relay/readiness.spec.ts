import { expect } from 'chai';
import { loadConfig } from '../../libs/config/config.js';
import { RelayError } from '../../libs/errors/errors.js';
import { createLogger } from '../../libs/logging/logger.js';
import { kafkaClusterToFault, type KafkaClusterToFault } from '../../libs/testing/kafka-target.js';
import { STORE_TARGETS } from '../../libs/testing/store-targets.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import { readinessCheck } from './readiness.js';
import { startRelay, type RunningRelay } from './relay.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

async function refusal(check: () => Promise<void>): Promise<RelayError> {
  try {
    await check();
  } catch (error) {
    if (error instanceof RelayError) return error;
    throw error;
  }
  throw new Error('expected the check to refuse');
}

describe('readinessCheck', () => {
  const up = { name: 'store', ping: async () => undefined };

  it('passes when every dependency answers', async () => {
    await readinessCheck([up, { name: 'broker', ping: async () => [] }])();
  });

  it('answers 503 naming the dependency that failed, and only that one', async () => {
    const error = await refusal(readinessCheck([up, { name: 'broker', ping: () => Promise.reject(new Error('ECONNREFUSED')) }]));
    expect(error.status).to.equal(503);
    expect(error.code).to.equal('SERVICE_UNAVAILABLE');
    expect(error.message).to.equal('Not ready: the broker is not reachable');
    expect(error.details).to.deep.equal([{ field: 'broker', message: 'not reachable' }]);
  });

  it('counts a dependency that hangs as down once the timeout passes', async () => {
    const hanging = { name: 'broker', ping: () => new Promise<never>(() => undefined) };
    const error = await refusal(readinessCheck([up, hanging], { timeoutMs: 20 }));
    expect(error.details).to.deep.equal([{ field: 'broker', message: 'not reachable' }]);
  });
});

describe('/readyz on the Kafka adapter [a Kafka broker of its own + SQLite]', function () {
  this.timeout(180_000);
  let kafka: KafkaClusterToFault | undefined;
  let relay: RunningRelay | undefined;
  let cleanupStore: (() => Promise<void>) | undefined;

  before(async function () {
    // Apache Kafka where a JVM runs (always on CI), else the librdkafka mock: a cluster of its own, as the case stops it.
    kafka = await kafkaClusterToFault(this);
    const store = await STORE_TARGETS[0]!.prepare(this);
    cleanupStore = store.cleanup;
    const env = { ...TEST_RELAY_ENV, RELAY_DATA_DIR: store.dataDir, ...kafka.env, PORT: '0', HOST: '127.0.0.1' };
    relay = await startRelay(loadConfig(env), { logger: createLogger({ level: 'silent' }) });
  });

  after(async () => {
    await relay?.close();
    await kafka?.cleanup();
    await cleanupStore?.();
  });

  it('answers 200 while the broker runs, and 503 naming the broker once it stops', async () => {
    const readyz = () => fetch(`${relay!.url}/readyz`);
    expect((await readyz()).status).to.equal(200);
    await kafka!.stopBrokers();
    const answer = await waitFor('a 503 from /readyz', readyz, (response) => response.status === 503, 20_000, 200);
    const body = (await answer.json()) as { message: string; details: unknown };
    expect(body).to.include({ error: 'Service Unavailable', code: 'SERVICE_UNAVAILABLE' });
    expect(body.message).to.equal('Not ready: the broker is not reachable');
    expect(body.details).to.deep.equal([{ field: 'broker', message: 'not reachable' }]);
  });
});
