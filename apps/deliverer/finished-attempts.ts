import type { DeliveryJob } from '../../libs/pipeline/delivery-job.js';

/**
 * The attempts this deliverer finished lately (sent, and their outcome reported), by delivery: the latest
 * `capacity` deliveries. A job for one of them again has nothing left to do: the router publishes the
 * deliveries of an ingest record read again after a crash a second time, behind the first job in the same
 * partition, so the second comes soon after the first was handled here.
 */
export class FinishedAttempts {
  private readonly latest = new Map<string, number>();

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
}
