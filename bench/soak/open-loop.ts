import { performance } from 'node:perf_hooks';

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across processes of one machine. */
export const now = () => performance.timeOrigin + performance.now();

export interface Answer {
  /** HTTP status, or null when no answer came (connection error, timeout). */
  status: number | null;
  eventId?: string;
}

export interface Outcome extends Answer {
  /** When the request was due by the schedule, not when the generator got round to it. */
  scheduledAt: number;
  answeredAt: number;
}

export interface OpenLoopOptions {
  rate: number;
  seconds: number;
  send(): Promise<Answer>;
}

/**
 * Sends `rate` requests a second for `seconds` on a fixed schedule, whatever the answers take (a provider
 * does not wait for us), and times each answer from its scheduled moment: a server that stalls, or a
 * generator that falls behind, shows in the latency instead of slowing the load down (no coordinated omission).
 */
export async function runOpenLoop({ rate, seconds, send }: OpenLoopOptions): Promise<Outcome[]> {
  const total = Math.round(rate * seconds);
  const intervalMs = 1000 / rate;
  const outcomes: Promise<Outcome>[] = [];
  const begin = now();
  const dispatch = (scheduledAt: number) =>
    send().then(
      (answer) => ({ ...answer, scheduledAt, answeredAt: now() }),
      () => ({ status: null, scheduledAt, answeredAt: now() }),
    );
  while (outcomes.length < total) {
    const due = Math.min(total, Math.floor((now() - begin) / intervalMs) + 1);
    while (outcomes.length < due) outcomes.push(dispatch(begin + outcomes.length * intervalMs));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return Promise.all(outcomes);
}
