import { setFlagsFromString } from 'node:v8';
import { getLogger } from './log/logger.js';

const log = getLogger('main', import.meta.url);

/**
 * When a process runs V8's optimising compiler (TurboFan). It is on by default, as V8 has it; it
 * is off while a process idles, and for the reads that ask for it (supervisor/optimising-compiler.ts).
 *
 * Why off while idle: an idle process still runs a little JavaScript, every few seconds (each
 * process gives its stats every flush interval, the supervisor refreshes its circuit-breaker
 * gauges). V8 optimises any function that has run often enough, however rarely: a small one
 * after a couple of thousand calls. Its first optimisation brings the compiler into the process
 * for good: 4.4 MB of the Node binary's pages resident, and its threads' heaps. Measured on the
 * bench bootstrap, the supervisor's RSS went from 52.4 to 57.3 MB when, 11 minutes into idling,
 * V8 optimised BreakerCounts.total (called 8 times every 5 s).
 *
 * So after IDLE_CHECKS_BEFORE_OFF idle checks in a row (shared/idle-housekeeping.ts: a minute, a
 * process being idle when its threads use under 1% of a core), the compiler is turned off; the
 * first sign of work turns it back on: a check that finds the process busy, or one of the hooks
 * where work arrives (a worker's new connection, an admin request, an xDS update), which call
 * `working()`. Code already optimised stays as it is either way.
 *
 * V8's flag hash follows the flag: with it off, V8 refuses code caches made under the default
 * flags (a module loaded then compiles from source). The hooks turn it on before the work they
 * announce loads anything; a load while idle is only slower.
 *
 * An operator's own V8 compiler flags (in the command line or NODE_OPTIONS) are left as given:
 * nothing here changes them.
 */
export const IDLE_CHECKS_BEFORE_OFF = 6;

const COMPILER_FLAGS = /--(no-)?(turbofan|opt|jitless|maglev|max-opt)\b/;

let operatorFlags: boolean | undefined;

/** The command line or NODE_OPTIONS names a V8 compiler flag. */
export function compilerFlagsGiven(): boolean {
  operatorFlags ??= process.execArgv.some((flag) => COMPILER_FLAGS.test(flag)) || COMPILER_FLAGS.test(process.env.NODE_OPTIONS ?? '');
  return operatorFlags;
}

/** Off because the process idles. */
let idleOff = false;
/** withoutOptimising()'s depth: off while above 0. */
let suspended = 0;
let idleChecks = 0;

function apply(): void {
  setFlagsFromString(idleOff || suspended > 0 ? '--no-turbofan' : '--turbofan');
}

/** Work is arriving: the compiler is on (unless something has it off for the moment). Cheap when it is on already. */
export function working(): void {
  idleChecks = 0;
  if (!idleOff) return;
  idleOff = false;
  apply();
  log.debug('work again: the optimising compiler is on');
}

/** A periodic check's verdict (shared/idle-housekeeping.ts): enough idle checks in a row, and the compiler goes off. */
export function checked(idle: boolean): void {
  if (!idle) {
    working();
    return;
  }
  if (idleOff || compilerFlagsGiven() || ++idleChecks < IDLE_CHECKS_BEFORE_OFF) return;
  idleOff = true;
  apply();
  log.debug(`idle for ${IDLE_CHECKS_BEFORE_OFF} checks in a row: the optimising compiler is off until work comes`);
}

/** Whether the compiler is on now. */
export function optimising(): boolean {
  return !idleOff && suspended === 0;
}

/** Runs `work` (synchronous) without the compiler; after it, the compiler is as it was. */
export function withoutOptimising<T>(work: () => T): T {
  if (compilerFlagsGiven()) return work();
  suspended++;
  if (suspended === 1 && !idleOff) apply();
  try {
    return work();
  } finally {
    suspended--;
    if (suspended === 0 && !idleOff) apply();
  }
}
