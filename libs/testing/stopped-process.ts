import { readdir, readFile } from 'node:fs/promises';

/**
 * Resolves once every thread of process `pid` is in the stopped state (`T` in /proc/<pid>/task/<tid>/stat):
 * a SIGSTOP takes effect when its target next runs, and on a busy machine a process answered a request
 * sent just after the signal. Throws when the process has exited.
 */
export async function untilStopped(pid: number): Promise<void> {
  for (;;) {
    // A thread that ended between the listing and its read is simply not counted.
    const threads = await readdir(`/proc/${pid}/task`).catch(() => []);
    const states = await Promise.all(threads.map((tid) => readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').then(statState, () => undefined)));
    const live = states.filter((state) => state !== undefined);
    if (live.length === 0 || live.some((state) => state === 'Z' || state === 'X')) throw new Error(`process ${pid} has exited`);
    if (live.every((state) => state === 'T' || state === 't')) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** The state field of a /proc stat line: the first field after the command name, which is in parentheses and may hold spaces. */
export const statState = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
