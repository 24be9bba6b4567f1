import type { Schedule } from '../time/schedule.js';

interface Pending {
  at: number;
  run: () => void;
}

/**
 * A scheduler whose timers fire only when a test advances it, for code that takes its scheduler injected
 * (`(run, ms) => cancel`): the test moves time on and sees what fired, instead of sleeping to prove that nothing did.
 */
export class ManualTimers {
  private now = 0;
  private readonly pending = new Set<Pending>();

  schedule: Schedule = (run, ms) => {
    const timer = { at: this.now + Math.max(0, ms), run };
    this.pending.add(timer);
    return () => void this.pending.delete(timer);
  };

  /** How many timers are waiting to fire. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Moves time on by `ms`, firing each timer that falls due, in order of its time. */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.pending].filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.pending.delete(due);
      this.now = due.at;
      due.run();
    }
    this.now = until;
  }
}
