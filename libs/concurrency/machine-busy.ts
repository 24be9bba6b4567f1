import os from 'node:os';

/** What the meter reads: each core's time so far, by kind (`os.cpus()`). */
export type CoreTimes = () => Pick<os.CpuInfo, 'times'>[];

function sumTimes(cores: ReturnType<CoreTimes>): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const { times } of cores) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, total };
}

/**
 * A meter of how busy the machine's cores are: each reading is the share of their time (0 to 1) spent on
 * anything but idling since the reading before (the first, since the meter was made), whoever's the work.
 * 0 when no time has passed.
 */
export function machineBusyMeter(coreTimes: CoreTimes = os.cpus): () => number {
  let last = sumTimes(coreTimes());
  return () => {
    const now = sumTimes(coreTimes());
    const total = now.total - last.total;
    const idle = now.idle - last.idle;
    last = now;
    return total > 0 ? Math.min(1, Math.max(0, 1 - idle / total)) : 0;
  };
}
