import type { BatchOutcome, BrokerRecord, RecordBatch } from '../../libs/broker/broker.js';
import { destinationTopic } from '../../libs/pipeline/topology.js';
import { readRecords, type DelivererLogger, type ReadRecord } from './destination-batch.js';

export interface LaneJobsDeps {
  /**
   * The destination topics' handler: it sees each destination's records as a batch of that destination's
   * topic and says how many (a prefix) it attempted; the rest had to wait (held, or shutting down).
   * `read`: the batch's records as the lane decoded them, so that none is decoded twice.
   */
  handleDestinationBatch(batch: RecordBatch, read: readonly ReadRecord[]): Promise<BatchOutcome>;
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
 * job of a destination without ordering, keyed by destination (docs/decisions/0008-kafka-lanes-and-parking.md). A batch is
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
  async function attempt(topic: string, part: ReadRecord[], partition: number): Promise<void> {
    const records = recordsOf(part);
    let handled = 0;
    try {
      ({ handled } = await deps.handleDestinationBatch({ topic, partition, records }, part));
    } catch (error) {
      deps.logger.warn({ topic, err: error }, 'Lane jobs failed here; they are parked in their own topic');
    }
    if (handled < records.length) await deps.park(topic, records.slice(handled));
  }

  return async function handleLaneBatch(batch: RecordBatch): Promise<BatchOutcome> {
    // Read on only as the work in hand finishes: bounds what a lane holds in memory.
    while (inFlight >= deps.maxRecordsInFlight && running.size > 0) await Promise.race(running);
    const parts = new Map<string, ReadRecord[]>();
    const unreadable: ReadRecord[] = [];
    for (const read of readRecords(batch.records)) {
      if (!read.decoded) {
        unreadable.push(read);
        continue;
      }
      const topic = destinationTopic(read.decoded.job.destinationId);
      // Keyed by source again, as in a destination topic (source windows and order go by the key).
      const asInItsTopic = { record: { ...read.record, topic, key: read.decoded.job.sourceId }, decoded: read.decoded };
      const part = parts.get(topic);
      if (part) part.push(asInItsTopic);
      else parts.set(topic, [asInItsTopic]);
    }
    // A job that cannot be read is handled as in a destination topic: it goes to relay.dead. Should some
    // not get there (a stop, a failed publish), nothing has started yet: the whole batch is read again.
    if (unreadable.length > 0) {
      const records = recordsOf(unreadable);
      const { handled } = await deps.handleDestinationBatch({ topic: batch.topic, partition: batch.partition, records }, unreadable);
      if (handled < unreadable.length) return { handled: 0 };
    }
    const work = [...parts].map(([topic, part]) => {
      const farBehind = (inFlightByTopic.get(topic) ?? 0) + part.length > deps.maxRecordsInFlightPerDestination;
      return track(topic, part.length, farBehind ? deps.park(topic, recordsOf(part)) : attempt(topic, part, batch.partition));
    });
    return { handled: batch.records.length, completion: Promise.all(work).then(() => undefined) };
  };
}

const recordsOf = (read: readonly ReadRecord[]) => read.map(({ record }) => record);
