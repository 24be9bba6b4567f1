import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/** CPU time and resident memory of other processes, read from /proc (Linux). */
export interface ProcessUsage {
  /** User + system CPU time in ms, summed over the processes. */
  cpuMs: number;
  /** Resident set size in bytes, summed over the processes. */
  rssBytes: number;
}

const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** `/proc/<pid>/stat`'s fields from field 3 (state) on: after the command name, which may contain spaces. */
const statFields = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
};
const ticksToMs = (ticks: number) => (ticks * 1000) / CLOCK_TICKS_PER_SECOND;

function cpuMsOf(pid: number): number {
  // utime is field 14, stime 15.
  const fields = statFields(pid);
  return ticksToMs(Number(fields[11]) + Number(fields[12]));
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
  const total = ticks.reduce((sum, count) => sum + count, 0);
  return { busyMs: ticksToMs(total - ticks[3]! - ticks[4]!), stealMs: ticksToMs(ticks[7]!), totalMs: ticksToMs(total) };
}

/** How busy the machine's cores were between two readings, and how much of their time the host took. */
export function machineBusy(before: MachineCpu, after: MachineCpu): string {
  const share = (ms: number) => `${((100 * ms) / Math.max(1, after.totalMs - before.totalMs)).toFixed(0)}%`;
  return `machine busy ${share(after.busyMs - before.busyMs)} (steal ${share(after.stealMs - before.stealMs)})`;
}

/**
 * CPU ms used so far by the local PostgreSQL server: every `postgres` process alive now, plus what the
 * postmaster's children that have exited used (its cutime and cstime: a backend closed between two
 * readings still counts). Its backends come and go with connections, so no fixed list of pids would do.
 */
export function postgresServerCpuMs(): number {
  let total = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      const fields = statFields(Number(entry));
      // The postmaster is the one whose parent is not a postgres process; its exited children: fields 16, 17.
      const parentComm = fs.readFileSync(`/proc/${fields[1]}/comm`, 'utf8').trim();
      total += ticksToMs(Number(fields[11]) + Number(fields[12]) + (parentComm === 'postgres' ? 0 : Number(fields[13]) + Number(fields[14])));
    } catch {
      // The process exited while being read: its time is in its parent's cutime from now on.
    }
  }
  return total;
}

/** CPU ms used so far by each named party, and the machine's CPU at the same moment. */
export interface CpuReading {
  parties: Record<string, number>;
  machine: MachineCpu;
}

/**
 * Who keeps the machine's cores busy: each named party's CPU time (a function, since some parties are not
 * a fixed set of processes) between two readings, in cores, and the rest of the machine's busy time as `other`.
 */
export function cpuByParty(parties: Record<string, () => number>): { read(): CpuReading; cores(before: CpuReading, after: CpuReading, seconds: number): string } {
  return {
    read: () => ({ parties: Object.fromEntries(Object.entries(parties).map(([name, cpuMs]) => [name, cpuMs()])), machine: machineCpu() }),
    cores(before, after, seconds) {
      const cores = (ms: number) => ms / 1000 / seconds;
      const named = Object.keys(parties).map((name) => [name, cores(after.parties[name]! - before.parties[name]!)] as const);
      const busy = cores(after.machine.busyMs - before.machine.busyMs);
      const other = busy - named.reduce((sum, [, used]) => sum + used, 0);
      return `${[...named, ['other', other] as const].map(([name, used]) => `${name} ${used.toFixed(2)}`).join(', ')} (busy ${busy.toFixed(2)} of ${os.availableParallelism()}) cores`;
    },
  };
}
