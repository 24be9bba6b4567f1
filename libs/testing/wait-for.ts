/** The `done` of a read that answers undefined until it has what it waits for. */
export const isDefined = <T>(value: T | undefined): value is T => value !== undefined;

/** The `done` of a read that is a condition. */
export const isTrue = (value: boolean): value is true => value;

/**
 * The one way tests wait: polls `read` until `done` accepts its value, or fails after `timeoutMs`
 * naming what it waited for and the last value (or error) it read.
 */
export async function waitFor<T, Done extends T>(what: string, read: () => T | Promise<T>, done: (value: T) => value is Done, timeoutMs?: number, pollMs?: number): Promise<Done>;
export async function waitFor<T>(what: string, read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs?: number, pollMs?: number): Promise<T>;
export async function waitFor<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
  pollMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const value = await read();
      if (done(value)) return value;
      last = JSON.stringify(value)?.slice(0, 500) ?? String(value);
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last read: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
