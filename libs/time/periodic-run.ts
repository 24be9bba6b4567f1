import { unrefSchedule, type Schedule } from './schedule.js';

export interface PeriodicRunOptions {
  /** One run; a failure is handed to `onError` and the next run tries again. */
  run(): Promise<unknown>;
  /** Between the end of one run and the start of the next: runs never overlap. */
  intervalMs: number;
  onError(error: unknown): void;
  /** Timers; by default the real clock's, not keeping the process alive. */
  schedule?: Schedule;
}

export interface PeriodicRun {
  /** Schedules the first run after `firstDelayMs`. */
  start(firstDelayMs: number): void;
  /** Stops scheduling and waits for a run in progress. */
  stop(): Promise<void>;
  /** True once `stop` was called: a long run can end early. */
  stopping(): boolean;
}

/** Background work on its own timer (the janitor, the notifier): one run at a time, each after the last. */
export function periodicRun(options: PeriodicRunOptions): PeriodicRun {
  const scheduleTimer = options.schedule ?? unrefSchedule;
  let cancelTimer: (() => void) | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;

  function schedule(delayMs: number): void {
    if (stopped) return;
    cancelTimer = scheduleTimer(() => {
      cancelTimer = undefined;
      running = options
        .run()
        .catch(options.onError)
        .finally(() => {
          running = undefined;
          schedule(options.intervalMs);
        });
    }, delayMs);
  }

  return {
    start: schedule,
    async stop() {
      stopped = true;
      cancelTimer?.();
      cancelTimer = undefined;
      await running;
    },
    stopping: () => stopped,
  };
}
