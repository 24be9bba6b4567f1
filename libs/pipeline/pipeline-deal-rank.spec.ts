import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Broker, Consumer } from '../broker/broker.js';
import { openEmbeddedBroker } from '../broker/embedded/embedded-broker.js';
import { partitionFor } from '../broker/partitioner.js';
import { CORE_TOPICS, DELIVERER_GROUP, DESTINATION_PARTITIONS, destinationTopic, INGEST_TOPIC, pipelineDealRank, ROUTER_GROUP } from './topology.js';

describe("pipeline threads in the embedded log's deal", function () {
  let dataDir: string;
  let broker: Broker;

  beforeEach(function () {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-deal-rank-'));
    broker = openEmbeddedBroker({ dataDir });
  });

  afterEach(async function () {
    await broker.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Which thread holds each partition of `topic` in `groupId`, the threads' consumers joining last first. */
  async function holders(groupId: string, topic: string, count: number): Promise<number[]> {
    const consumers: Consumer[] = [];
    for (let index = count - 1; index >= 0; index--) {
      consumers[index] = broker.consumer({ groupId, topics: [topic], handleBatch: async () => undefined, rank: pipelineDealRank(groupId, index, count) });
      await consumers[index]!.start();
    }
    const holder: number[] = [];
    consumers.forEach((consumer, index) => {
      for (const { partitions } of consumer.assignment()) for (const partition of partitions) holder[partition] = index;
    });
    for (const consumer of consumers) await consumer.stop();
    return holder;
  }

  it("routes and delivers each source's webhooks on different threads, for 2 to 8 threads", async function () {
    await broker.admin().ensureTopics([CORE_TOPICS.find(({ topic }) => topic === INGEST_TOPIC)!, { topic: destinationTopic('dst_1'), partitions: DESTINATION_PARTITIONS }]);
    const sources = Array.from({ length: 64 }, (_, i) => `src_${i}`);
    for (let count = 2; count <= 8; count++) {
      const routing = await holders(ROUTER_GROUP, INGEST_TOPIC, count);
      const delivering = await holders(DELIVERER_GROUP, destinationTopic('dst_1'), count);
      // Both topics are keyed by source: the partition each source's records go to.
      const shared = sources.filter((source) => routing[partitionFor(source, routing.length)] === delivering[partitionFor(source, delivering.length)]);
      expect(shared, `${count} threads`).to.deep.equal([]);
      expect(new Set(routing).size, `${count} threads route`).to.equal(Math.min(count, routing.length));
    }
  });
});
