import type { Schedule } from '../time/schedule.js';

interface Pending {
  at: number;
  run: () => void;
}

/**
 * A scheduler whose timers fire only when a test advances it, and the clock they run by, for code that takes
 * its scheduler (`(run, ms) => cancel`) and clock injected: the test moves time on and sees what fired,
 * instead of sleeping to prove that nothing did.
 */
export class ManualTimers {
  private readonly pending = new Set<Pending>();
  private at: number;

  /** `start`: where the clock (`now`) begins, e.g. `Date.now()` where it is compared with real timestamps. */
  constructor(start = 0) {
    this.at = start;
  }

  /** The clock the timers run by; only `advance` moves it. */
  now = (): number => this.at;

  schedule: Schedule = (run, ms) => {
    const timer = { at: this.at + Math.max(0, ms), run };
    this.pending.add(timer);
    return () => void this.pending.delete(timer);
  };

  /** How many timers are waiting to fire. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Moves time on by `ms`, firing each timer that falls due, in order of its time. */
  advance(ms: number): void {
    const until = this.at + ms;
    for (;;) {
      const due = [...this.pending].filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.pending.delete(due);
      this.at = due.at;
      due.run();
    }
    this.at = until;
  }
}
