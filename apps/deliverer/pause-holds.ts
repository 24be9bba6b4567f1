import type { Consumer } from '../../libs/broker/broker.js';
import { systemSchedule, type Schedule } from '../../libs/time/schedule.js';

/** A topic, or one partition of it. */
export interface HoldTarget {
  topic: string;
  partition?: number;
}

const untimed = () => {};

interface Hold {
  target: HoldTarget;
  /** Each reason with how to cancel its timer. */
  reasons: Map<string, () => void>;
}

/**
 * Pauses for several independent reasons at once (rate budget spent, circuit open, destination
 * disabled, head record not due): the consumer is paused while any reason holds a target and resumed
 * when the last one is released, so one reason's timer never undoes another reason's pause.
 */
export class PauseHolds {
  private readonly holds = new Map<string, Hold>();

  constructor(
    private readonly consumer: Pick<Consumer, 'pause' | 'resume'>,
    private readonly schedule: Schedule = systemSchedule,
  ) {}

  /** Holds `target` for `reason`; with `forMs`, releases it by itself then (a later hold replaces the timer). */
  hold(target: HoldTarget, reason: string, forMs?: number): void {
    const key = keyOf(target);
    let hold = this.holds.get(key);
    if (!hold) {
      hold = { target, reasons: new Map() };
      this.holds.set(key, hold);
      this.consumer.pause(target.topic, partitionsOf(target));
    }
    hold.reasons.get(reason)?.();
    hold.reasons.set(reason, forMs === undefined ? untimed : this.schedule(() => this.release(target, reason), Math.max(0, forMs)));
  }

  release(target: HoldTarget, reason: string): void {
    const key = keyOf(target);
    const hold = this.holds.get(key);
    if (!hold?.reasons.has(reason)) return;
    hold.reasons.get(reason)!();
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
    for (const hold of this.holds.values()) for (const cancel of hold.reasons.values()) cancel();
    this.holds.clear();
  }
}

const keyOf = (target: HoldTarget) => (target.partition === undefined ? target.topic : `${target.topic}#${target.partition}`);
const partitionsOf = (target: HoldTarget) => (target.partition === undefined ? undefined : [target.partition]);
