import type { BatchOutcome, BrokerRecord, Producer, RecordBatch } from '../../libs/broker/broker.js';
import { decodeDeliveryJob, destinationTopic, type DeliveryJob } from '../../libs/pipeline/delivery-job.js';

export const FRESH_GROUP = 'relay-deliverer-fresh';

export interface FreshDestinationsDeps {
  /** The destination topics' handler: it sees each destination's records as a batch of that destination's topic. */
  handleDestinationBatch(batch: RecordBatch): Promise<BatchOutcome>;
  producer: Pick<Producer, 'send'>;
}

/**
 * The handler of relay.fresh, the shared topic of new destinations' first attempts (docs/DECISIONS.md).
 * Its records are split by destination and each part is handled as a batch of that destination's own
 * topic. What must wait there (rate budget spent, circuit open, disabled, shutting down) is moved to the
 * destination's own topic, which that handler has just paused for the reason: relay.fresh itself is never
 * paused for one destination. A slow answer holds up only the new destinations sharing its partition
 * (records are keyed by destination), for as long as they are new. The move is published before relay.fresh's
 * offsets are committed; a failure in between only costs a duplicate.
 */
export function createFreshDestinationsHandler(deps: FreshDestinationsDeps) {
  return async function handleFreshBatch(batch: RecordBatch): Promise<void> {
    const byTopic = new Map<string, BrokerRecord[]>();
    for (const record of batch.records) {
      const job = readJob(record);
      // Keyed by source again, as in a destination topic (source windows and order go by the key). A job
      // that cannot be read makes a part of relay.fresh's own: the destination handler sends it to relay.dead.
      const [topic, asInItsTopic] = job ? [destinationTopic(job.destinationId), { ...record, key: job.sourceId }] : [batch.topic, record];
      const part = byTopic.get(topic);
      if (part) part.push(asInItsTopic);
      else byTopic.set(topic, [asInItsTopic]);
    }
    const outcomes = await Promise.allSettled(
      [...byTopic].map(async ([topic, records]) => {
        const { handled } = await deps.handleDestinationBatch({ topic, partition: batch.partition, records });
        const waiting = records.slice(handled);
        if (waiting.length > 0) await deps.producer.send(topic, waiting.map(({ key, value, headers }) => ({ key, value, headers })));
      }),
    );
    // All of it again (at least once): the parts that did go through are delivered or moved twice.
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  };
}

function readJob(record: BrokerRecord): DeliveryJob | undefined {
  try {
    return decodeDeliveryJob(record).job;
  } catch {
    return undefined;
  }
}
