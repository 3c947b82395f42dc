// Where the bench's processes run, as issue 18's table was measured on a 2-core machine: the
// proxies under test (this one's whole tree, the plain Node proxy, nginx, HAProxy) on one core,
// the upstream and the load generator on another, so that neither side takes the other's CPU.
// With taskset (util-linux) and at least two cores; PIN=0 turns it off.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

export const PROXY_CORE = 0;
export const LOAD_CORE = 1;

export const pinning = process.env.PIN !== '0' && availableParallelism() >= 2 && spawnSync('taskset', ['--version']).error === undefined;

/** `command args`, run on `core` when pinning (taskset execs it: the process keeps taskset's pid); a negative core is no pinning. */
export function pinned(core: number, command: string, args: string[]): [string, string[]] {
  return pinning && core >= 0 ? ['taskset', ['-c', String(core), command, ...args]] : [command, args];
}

export function pinningSummary(): string {
  return pinning ? `proxies pinned to core ${PROXY_CORE}, upstream and load to core ${LOAD_CORE}` : 'not pinned (PIN=0, one core, or no taskset)';
}
