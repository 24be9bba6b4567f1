import type { BatchOutcome, BrokerRecord, RecordBatch } from '../../libs/broker/broker.js';
import { decodeDeliveryJob, type DeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { destinationTopic } from '../../libs/pipeline/topology.js';
import type { DelivererLogger } from './destination-batch.js';

export interface LaneJobsDeps {
  /**
   * The destination topics' handler: it sees each destination's records as a batch of that destination's
   * topic and says how many (a prefix) it attempted; the rest had to wait (held, or shutting down).
   */
  handleDestinationBatch(batch: RecordBatch): Promise<BatchOutcome>;
  /** Moves jobs that must wait to their destination's own topic (`relay.dst.<id>`), creating and subscribing to it. */
  park(topic: string, records: BrokerRecord[]): Promise<void>;
  /**
   * Jobs of one destination whose attempts may run here beyond the lane's read position; the jobs of a
   * destination already that far behind (hanging, slow) are parked unattempted.
   */
  maxRecordsInFlightPerDestination: number;
  /** Jobs of all destinations in flight from the lanes; past it, the lanes are read on only as they finish. */
  maxRecordsInFlight: number;
  logger: DelivererLogger;
}

/**
 * The handler of the lanes (`relay.lanes`, and `relay.fresh` from before them): the shared topic of every
 * job of a destination without ordering, keyed by destination (docs/DECISIONS.md, "Lanes"). A batch is
 * split by destination, and each destination's part is handled in the background exactly as a batch of
 * that destination's own topic would be (same lookup, breaker, rate budget, windows, attempts). The
 * handler returns at once with the parts' work as the batch's completion, so the lane is read on without
 * waiting for any answer (a hanging destination holds up no other on its partition) while its commits
 * stay below the first job not yet answered (the broker's `CommitOrder`: a crash sends again what was
 * unanswered, at least once). What a destination cannot take now (held, too far behind, or not started
 * before a stop) is parked in its own topic, where it waits for the hold as an ordered destination's
 * jobs do, and which the next deliverer's subscription covers.
 */
export function createLaneJobsHandler(deps: LaneJobsDeps) {
  const inFlightByTopic = new Map<string, number>();
  /** Settles as each part's work ends, failed or not. */
  const running = new Set<Promise<unknown>>();
  let inFlight = 0;

  function track(topic: string, count: number, work: Promise<void>): Promise<void> {
    inFlightByTopic.set(topic, (inFlightByTopic.get(topic) ?? 0) + count);
    inFlight += count;
    const done = work.finally(() => {
      const left = inFlightByTopic.get(topic)! - count;
      if (left > 0) inFlightByTopic.set(topic, left);
      else inFlightByTopic.delete(topic);
      inFlight -= count;
    });
    const ended = done.catch(() => undefined);
    running.add(ended);
    void ended.then(() => running.delete(ended));
    return done;
  }

  /** A part attempted here; what it did not start is parked. */
  async function attempt(topic: string, records: BrokerRecord[], partition: number): Promise<void> {
    let handled = 0;
    try {
      ({ handled } = await deps.handleDestinationBatch({ topic, partition, records }));
    } catch (error) {
      deps.logger.warn({ topic, err: error }, 'Lane jobs failed here; they are parked in their own topic');
    }
    if (handled < records.length) await deps.park(topic, records.slice(handled));
  }

  return async function handleLaneBatch(batch: RecordBatch): Promise<BatchOutcome> {
    // Read on only as the work in hand finishes: bounds what a lane holds in memory.
    while (inFlight >= deps.maxRecordsInFlight && running.size > 0) await Promise.race(running);
    const parts = new Map<string, BrokerRecord[]>();
    const unreadable: BrokerRecord[] = [];
    for (const record of batch.records) {
      const job = readJob(record);
      if (!job) {
        unreadable.push(record);
        continue;
      }
      const topic = destinationTopic(job.destinationId);
      // Keyed by source again, as in a destination topic (source windows and order go by the key).
      const asInItsTopic = { ...record, topic, key: job.sourceId };
      const part = parts.get(topic);
      if (part) part.push(asInItsTopic);
      else parts.set(topic, [asInItsTopic]);
    }
    // A job that cannot be read is handled as in a destination topic: it goes to relay.dead.
    if (unreadable.length > 0) await deps.handleDestinationBatch({ topic: batch.topic, partition: batch.partition, records: unreadable });
    const work = [...parts].map(([topic, records]) => {
      const farBehind = (inFlightByTopic.get(topic) ?? 0) + records.length > deps.maxRecordsInFlightPerDestination;
      return track(topic, records.length, farBehind ? deps.park(topic, records) : attempt(topic, records, batch.partition));
    });
    return { handled: batch.records.length, completion: Promise.all(work).then(() => undefined) };
  };
}

function readJob(record: BrokerRecord): DeliveryJob | undefined {
  try {
    return decodeDeliveryJob(record).job;
  } catch {
    return undefined;
  }
}
