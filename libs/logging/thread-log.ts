import type { DestinationStream, Level, Logger } from 'pino';

/** A worker thread's log destination: each line its logger writes is posted to the thread that started it. */
export const postedLines = (post: (line: string) => void): DestinationStream => ({ write: post });

/**
 * Logs the lines a worker thread's logger wrote (postedLines) through `logger`, the starting thread's:
 * one destination, level and redaction for the whole process, with the worker's own fields kept.
 */
export function lineForwarder(logger: Logger): (line: string) => void {
  // The worker already serialized its errors; serialized again, a plain object's class would read Object.
  const forwarded = logger.child({}, { serializers: { err: (err: unknown) => err } });
  return (line) => {
    // `time`, `pid` and `name` are stamped again here; the rest is what the worker logged.
    const { level, time: _time, pid: _pid, name: _name, msg, ...fields } = JSON.parse(line) as { level: number; msg?: string; [field: string]: unknown };
    forwarded[forwarded.levels.labels[level] as Level](fields, msg);
  };
}
