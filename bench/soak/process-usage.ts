import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** CPU time and resident memory of other processes, read from /proc (Linux). */
export interface ProcessUsage {
  /** User + system CPU time in ms, summed over the processes. */
  cpuMs: number;
  /** Resident set size in bytes, summed over the processes. */
  rssBytes: number;
}

const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

function cpuMsOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces), from field 3 (state) on: utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

function rssBytesOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kilobytes = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return Number(kilobytes ?? 0) * 1024;
}

export function processUsage(pids: readonly number[]): ProcessUsage {
  return {
    cpuMs: pids.reduce((sum, pid) => sum + cpuMsOf(pid), 0),
    rssBytes: pids.reduce((sum, pid) => sum + rssBytesOf(pid), 0),
  };
}

/** Samples the summed RSS every `intervalMs` until stopped; answers the largest seen. */
export function watchPeakRss(pids: readonly number[], intervalMs = 500): { stop(): number } {
  let peak = processUsage(pids).rssBytes;
  const timer = setInterval(() => {
    peak = Math.max(peak, processUsage(pids).rssBytes);
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, processUsage(pids).rssBytes);
    },
  };
}

/** The machine's CPU time since boot, in ms summed over its cores (/proc/stat): busy, stolen by its host, in all. */
export interface MachineCpu {
  busyMs: number;
  stealMs: number;
  totalMs: number;
}

export function machineCpu(): MachineCpu {
  // user nice system idle iowait irq softirq steal (guest time is within user).
  const ticks = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const toMs = (count: number) => (count * 1000) / CLOCK_TICKS_PER_SECOND;
  const total = ticks.reduce((sum, count) => sum + count, 0);
  return { busyMs: toMs(total - ticks[3]! - ticks[4]!), stealMs: toMs(ticks[7]!), totalMs: toMs(total) };
}

/** How busy the machine's cores were between two readings, and how much of their time the host took. */
export function machineBusy(before: MachineCpu, after: MachineCpu): string {
  const share = (ms: number) => `${((100 * ms) / Math.max(1, after.totalMs - before.totalMs)).toFixed(0)}%`;
  return `machine busy ${share(after.busyMs - before.busyMs)} (steal ${share(after.stealMs - before.stealMs)})`;
}
