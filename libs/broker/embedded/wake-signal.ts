/** Lets one async loop sleep until something changes (or a timeout passes), without polling. */
export class WakeSignal {
  private waiting: (() => void) | null = null;

  /** Resolves on the next `notify`, or after `timeoutMs` when given. */
  wait(timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => this.release(), timeoutMs);
      this.waiting = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  notify(): void {
    this.release();
  }

  private release(): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }
}
