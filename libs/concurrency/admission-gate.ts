/**
 * A bound on work in progress that refuses rather than queues: `tryEnter` gives a place while fewer than
 * `size` are held, and nothing otherwise. For load shedding, where a caller past the bound must be told
 * at once (a queue would only move the wait somewhere the caller cannot see).
 */
export class AdmissionGate {
  private held = 0;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('An admission gate must have a positive integer size');
  }

  /** Places held now. */
  get inUse(): number {
    return this.held;
  }

  /** The function that gives the place back (calling it twice gives back once), or undefined when the gate is full. */
  tryEnter(): (() => void) | undefined {
    if (this.held >= this.size) return undefined;
    this.held += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= 1;
    };
  }
}
