/** The records the crash test's child produces, derived from their number so the parent can check every byte. */
export const CRASH_TOPIC = 'crash.test';

/** Record `n`'s value: its number, then bytes derived from it; every 200th is 64 KB, spanning many pages. */
export function crashValue(n: number): Buffer {
  const value = Buffer.alloc(n % 200 === 0 ? 64 * 1024 : 200, n % 251);
  value.write(`${n}:`);
  return value;
}

export function crashKey(n: number): string {
  return `key-${n % 5}`;
}
