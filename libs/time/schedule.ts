/** Runs `run` after `ms` and answers how to cancel it; tests pass a scheduler they advance themselves. */
export type Schedule = (run: () => void, ms: number) => () => void;

/** The real clock's `setTimeout`; a pending timer keeps the process alive. */
export const systemSchedule: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
};

/** The real clock's `setTimeout`, unref'd: a pending timer does not keep the process alive. */
export const unrefSchedule: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  timer.unref();
  return () => clearTimeout(timer);
};
