import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openEmbeddedBroker } from '../../libs/broker/embedded/embedded-broker.js';
import { createLogger } from '../../libs/logging/logger.js';
import { createRelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { startLagReporter } from './lag-reporter.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';

describe('startLagReporter', () => {
  it('publishes the records a group has not consumed yet as relay_consumer_lag per topic', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lag-'));
    const broker = openEmbeddedBroker({ dataDir });
    try {
      const producer = broker.producer();
      const message = (n: number) => ({ key: `k${n}`, value: Buffer.from(String(n)) });
      await producer.send('lag.topic', [1, 2].map(message));
      let seen = 0;
      const consumer = broker.consumer({ groupId: 'lag-group', topics: ['lag.topic'], fromBeginning: true, handleBatch: async (batch) => void (seen += batch.records.length) });
      await consumer.start();
      await waitFor('the first records to be consumed', async () => (seen === 2 ? true : undefined), isDefined, 5000);
      await consumer.stop();
      await producer.send('lag.topic', [3, 4, 5].map(message));

      const metrics = createRelayMetrics({ defaultMetrics: false });
      const reporter = startLagReporter({ admin: broker.admin(), groups: ['lag-group'], gauge: metrics.consumerLag, logger: createLogger({ level: 'silent' }), intervalMs: 10 });
      const lag = await waitFor('lag 3', async () => {
        const value = (await metrics.consumerLag.get()).values.find((v) => v.labels.group === 'lag-group' && v.labels.topic === 'lag.topic')?.value;
        return value === 3 ? value : undefined;
      }, isDefined, 5000);
      await reporter.stop();
      expect(lag).to.equal(3);
    } finally {
      await broker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
