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
  private readonly scheduled = new Set<Pending>();

  schedule = (run: () => void, ms: number): (() => void) => {
    const timer = { at: this.now + Math.max(0, ms), run };
    this.scheduled.add(timer);
    return () => void this.scheduled.delete(timer);
  };

  /** Timers not yet fired nor cancelled. */
  pending(): number {
    return this.scheduled.size;
  }

  /** Moves time on by `ms`, firing each timer that falls due, in order of its time. */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.scheduled].filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.scheduled.delete(due);
      this.now = due.at;
      due.run();
    }
    this.now = until;
  }
}
