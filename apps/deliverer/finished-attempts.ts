import type { DeliveryJob } from '../../libs/pipeline/delivery-job.js';

/**
 * The attempts this deliverer finished lately (sent, and their outcome reported), by delivery: the latest
 * `capacity` deliveries, and those it has in flight. A job for one of them again has nothing left to do:
 * the router publishes the deliveries of an ingest record read again after a crash a second time, behind
 * the first job in the same partition, so the second comes soon after the first was handled here, or
 * while it is still in flight (on Kafka, with the attempt's publish to three brokers, often).
 */
export class FinishedAttempts<Result = unknown> {
  private readonly latest = new Map<string, number>();
  private readonly inFlight = new Map<string, { attemptNumber: number; task: Promise<Result> }>();

  constructor(private readonly capacity: number) {}

  add(job: DeliveryJob): void {
    this.latest.delete(job.deliveryId);
    this.latest.set(job.deliveryId, job.attemptNumber);
    // A Map iterates in insertion order: the first key is the one finished longest ago.
    if (this.latest.size > this.capacity) this.latest.delete(this.latest.keys().next().value!);
  }

  /** Whether this attempt of the job's delivery, or a later one, was finished here. */
  covers(job: DeliveryJob): boolean {
    return (this.latest.get(job.deliveryId) ?? 0) >= job.attemptNumber;
  }

  /** The job's attempt runs here until `task` settles. */
  track(job: DeliveryJob, task: Promise<Result>): void {
    const entry = { attemptNumber: job.attemptNumber, task };
    this.inFlight.set(job.deliveryId, entry);
    const forget = () => {
      if (this.inFlight.get(job.deliveryId) === entry) this.inFlight.delete(job.deliveryId);
    };
    task.then(forget, forget);
  }

  /** The task of this attempt of the job's delivery (or a later one) in flight here: the job's own outcome. */
  running(job: DeliveryJob): Promise<Result> | undefined {
    const entry = this.inFlight.get(job.deliveryId);
    return entry && entry.attemptNumber >= job.attemptNumber ? entry.task : undefined;
  }
}
