import type { Consumer } from '../../libs/broker/broker.js';

/** A topic, or one partition of it. */
export interface HoldTarget {
  topic: string;
  partition?: number;
}

interface Hold {
  target: HoldTarget;
  reasons: Map<string, NodeJS.Timeout | null>;
}

/**
 * Pauses for several independent reasons at once (rate budget spent, circuit open, destination
 * disabled, head record not due): the consumer is paused while any reason holds a target and resumed
 * when the last one is released, so one reason's timer never undoes another reason's pause.
 */
export class PauseHolds {
  private readonly holds = new Map<string, Hold>();

  constructor(private readonly consumer: Pick<Consumer, 'pause' | 'resume'>) {}

  /** Holds `target` for `reason`; with `forMs`, releases it by itself then (a later hold replaces the timer). */
  hold(target: HoldTarget, reason: string, forMs?: number): void {
    const key = keyOf(target);
    let hold = this.holds.get(key);
    if (!hold) {
      hold = { target, reasons: new Map() };
      this.holds.set(key, hold);
      this.consumer.pause(target.topic, partitionsOf(target));
    }
    clearTimeout(hold.reasons.get(reason) ?? undefined);
    const timer = forMs === undefined ? null : setTimeout(() => this.release(target, reason), Math.max(0, forMs));
    hold.reasons.set(reason, timer);
  }

  release(target: HoldTarget, reason: string): void {
    const key = keyOf(target);
    const hold = this.holds.get(key);
    if (!hold?.reasons.has(reason)) return;
    clearTimeout(hold.reasons.get(reason) ?? undefined);
    hold.reasons.delete(reason);
    if (hold.reasons.size > 0) return;
    this.holds.delete(key);
    this.consumer.resume(target.topic, partitionsOf(target));
  }

  /** Targets currently held for `reason`. */
  heldFor(reason: string): HoldTarget[] {
    return [...this.holds.values()].filter((hold) => hold.reasons.has(reason)).map((hold) => hold.target);
  }

  /** Drops every timer (shutdown); the consumer is being stopped, so nothing is resumed. */
  clear(): void {
    for (const hold of this.holds.values()) for (const timer of hold.reasons.values()) clearTimeout(timer ?? undefined);
    this.holds.clear();
  }
}

const keyOf = (target: HoldTarget) => (target.partition === undefined ? target.topic : `${target.topic}#${target.partition}`);
const partitionsOf = (target: HoldTarget) => (target.partition === undefined ? undefined : [target.partition]);
