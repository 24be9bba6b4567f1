import type { Admin } from '../../libs/broker/broker.js';
import { ATTEMPTS_TOPIC, RECORDER_GROUP } from '../../libs/pipeline/topology.js';
import type { Schedule } from '../../libs/time/schedule.js';

export interface CatchUpOptions {
  now: () => number;
  schedule: Schedule;
  /** Between looks at the recorder group's offsets (default 50 ms). */
  pollMs?: number;
  /** Given up after this (default 5 s): no recorder may be running. */
  maxWaitMs?: number;
}

/** A partition's read position; "-1" (never committed) is its start. */
const position = (offset: string) => BigInt(offset === '-1' ? '0' : offset);

/**
 * Resolves once the recorder group has committed every attempt published to relay.attempts before this
 * call, or after `maxWaitMs`: from then on the store knows every delivery an earlier process delivered
 * (it publishes an attempt before committing its job). Rejects when the broker cannot tell.
 */
export async function recorderCaughtUp(admin: Pick<Admin, 'lag'>, options: CatchUpOptions): Promise<void> {
  const deadline = options.now() + (options.maxWaitMs ?? 5000);
  const ends = new Map((await admin.lag(RECORDER_GROUP, [ATTEMPTS_TOPIC])).map((partition) => [partition.partition, position(partition.end)]));
  for (;;) {
    const lags = await admin.lag(RECORDER_GROUP, [ATTEMPTS_TOPIC]);
    if (lags.every((partition) => position(partition.committed) >= (ends.get(partition.partition) ?? 0n))) return;
    if (options.now() >= deadline) return;
    await new Promise<void>((resolve) => options.schedule(resolve, options.pollMs ?? 50));
  }
}
