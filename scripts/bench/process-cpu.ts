import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second, the unit of /proc/<pid>/stat's CPU times. */
export const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

/** utime + stime of a process and all its descendants, in clock ticks. */
export function treeCpuTicks(pid: number): number {
  const { user, kernel } = treeCpuSplit(pid);
  return user + kernel;
}

/**
 * The same, as its two halves: user space (utime) and the kernel on the process's behalf (stime:
 * its system calls, the TCP stack of what it sends). Set side by side with a peer's, they say
 * whether a gap is the proxy's own code or what any proxy pays the kernel.
 */
export function treeCpuSplit(pid: number): { user: number; kernel: number } {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    const kids = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pids[i])], { encoding: 'utf8' }).stdout.split('\n').map(Number).filter((n) => n > 0);
    pids.push(...kids);
  }
  let user = 0;
  let kernel = 0;
  for (const p of pids) {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      user += Number(fields[11]);
      kernel += Number(fields[12]);
    } catch {
      // exited
    }
  }
  return { user, kernel };
}
