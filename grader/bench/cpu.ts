/** CPU time of the grader's benchmarks, from /proc (Linux). */
import { readFileSync } from 'node:fs';

/** Ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const HZ = 100;

/**
 * CPU seconds of this process (`self`: its own work, its threads included)
 * and of the children it has waited for (`children`: every process it
 * started and waited for, and theirs, once they ended), or null off Linux.
 */
export function ownCpuSeconds(): { self: number; children: number } | null {
  try {
    // After the command name: state is field 3; utime, stime, cutime, cstime are fields 14 to 17.
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return { self: (Number(f[11]) + Number(f[12])) / HZ, children: (Number(f[13]) + Number(f[14])) / HZ };
  } catch {
    return null;
  }
}

/** CPU seconds of the ended children this process waited for (NaN off Linux, so that a ratio shows it). */
export function childCpuSeconds(): number {
  return ownCpuSeconds()?.children ?? Number.NaN;
}

/** Busy CPU seconds of the whole machine so far, from /proc/stat, or null. */
export function machineCpuSeconds(): number | null {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3]! + (f[4] ?? 0);
    return (f.reduce((a, b) => a + b, 0) - idle) / HZ;
  } catch {
    return null;
  }
}
