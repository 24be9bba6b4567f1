import type { BatchOutcome, BrokerRecord, OutgoingMessage, Producer, RecordBatch } from '../../libs/broker/broker.js';
import { decodeDeliveryJob, type DeliveryJob } from '../../libs/pipeline/delivery-job.js';
import type { DelivererLogger } from './destination-batch.js';
import { HAND_OVER_START_MS, HANDED_OVER_HEADER, handOverKey, type HandedOverJobs } from './handed-over-jobs.js';
import { destinationTopic } from '../../libs/pipeline/topology.js';


export interface FreshDestinationsDeps {
  /**
   * The destination topics' handler: it sees each destination's records as a batch of that destination's
   * topic, starting none after `startBy`.
   */
  handleDestinationBatch(batch: RecordBatch, startBy?: number): Promise<BatchOutcome>;
  producer: Pick<Producer, 'send'>;
  handedOver: HandedOverJobs;
  /**
   * Jobs of one destination whose attempts may run here beyond relay.fresh's offset; the jobs of a
   * destination already that far behind (hanging, slow) are moved to its own topic unattempted.
   */
  maxRecordsInFlightPerDestination: number;
  logger: DelivererLogger;
  now: () => number;
}

/**
 * The handler of relay.fresh, the shared topic of new destinations' first attempts (docs/DECISIONS.md,
 * "New destinations on Kafka"). Its records are split by destination. Each destination's part is first
 * copied to the destination's own topic, marked as handed over, and then handled in the background as a
 * batch of that topic, so relay.fresh's offset moves on without waiting for any answer: a hanging new
 * destination holds up no other. The copies are the durable record of the work (a crash or a stop costs
 * at most a duplicate). Each copy carries the time it was handed over and, when its topic is read by
 * whichever deliverer, is dropped if its original was attempted (known here, or marked in the store),
 * sent if it was not, and looked at again at its deadline when not yet known (destination-batch.ts).
 */
export function createFreshDestinationsHandler(deps: FreshDestinationsDeps) {
  return async function handleFreshBatch(batch: RecordBatch): Promise<void> {
    const parts = new Map<string, { records: BrokerRecord[]; keys: string[] }>();
    const unreadable: BrokerRecord[] = [];
    const jobs = batch.records.map((record) => ({ record, job: readJob(record) }));
    // relay.fresh read again (a failed commit, or a rebalance that gave the partition to another
    // deliverer): a job already attempted after its hand-over, here or marked by another deliverer, has
    // its copy and its attempt. One store read per batch, during a destination's first minutes only.
    const markedElsewhere = await deps.handedOver.attemptedElsewhere(jobs.flatMap(({ job }) => (job ? [handOverKey(job)] : [])));
    for (const { record, job } of jobs) {
      if (!job) {
        unreadable.push(record);
        continue;
      }
      const key = handOverKey(job);
      if (deps.handedOver.has(key) || markedElsewhere.has(key)) continue;
      const topic = destinationTopic(job.destinationId);
      // Keyed by source again, as in a destination topic (source windows and order go by the key).
      const asInItsTopic = { ...record, topic, key: job.sourceId };
      const part = parts.get(topic);
      if (part) {
        part.records.push(asInItsTopic);
        part.keys.push(key);
      } else parts.set(topic, { records: [asInItsTopic], keys: [key] });
    }
    const handedOverAt = deps.now();
    await Promise.all(
      [...parts].map(async ([topic, { records, keys }]) => {
        if (deps.handedOver.recordsInFlight(topic) + records.length > deps.maxRecordsInFlightPerDestination) {
          await deps.producer.send(topic, records.map((record) => copyOf(record)));
          return;
        }
        const part = deps.handedOver.begin(topic, keys);
        try {
          await deps.producer.send(topic, records.map((record) => copyOf(record, handedOverAt)));
        } catch (error) {
          part.abandon();
          throw error;
        }
        // Copied first, so every job taken off relay.fresh is in its own topic as well.
        part.run(
          deps.handleDestinationBatch({ topic, partition: batch.partition, records }, handedOverAt + HAND_OVER_START_MS).then(
            ({ handled }) => handled,
            (error: unknown) => {
              deps.logger.warn({ topic, err: error }, 'Jobs handed over from relay.fresh failed here; their copies are sent from their own topic');
              return 0;
            },
          ),
        );
      }),
    );
    // A job that cannot be read is handled as in a destination topic: it goes to relay.dead.
    if (unreadable.length > 0) await deps.handleDestinationBatch({ topic: batch.topic, partition: batch.partition, records: unreadable });
  };
}

/** A job moved to its own topic unattempted has no hand-over time: its copy is simply sent. */
function copyOf({ key, value, headers }: BrokerRecord, handedOverAt?: number): OutgoingMessage {
  return { key, value, headers: handedOverAt === undefined ? headers : { ...headers, [HANDED_OVER_HEADER]: String(handedOverAt) } };
}

function readJob(record: BrokerRecord): DeliveryJob | undefined {
  try {
    return decodeDeliveryJob(record).job;
  } catch {
    return undefined;
  }
}
