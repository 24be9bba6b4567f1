/** Runs `run` after `ms` and answers how to cancel it; tests pass a scheduler they advance themselves (libs/testing/manual-timers.ts). */
export type Schedule = (run: () => void, ms: number) => () => void;

/** Node's timers. */
export const systemSchedule: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
};

/** Node's timers, which never keep a process alive on their own (background housekeeping). */
export const backgroundSchedule: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  timer.unref();
  return () => clearTimeout(timer);
};
