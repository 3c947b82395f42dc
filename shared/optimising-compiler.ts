import { v8Module } from './builtins.js';
import { getLogger } from './log/logger.js';

const log = getLogger('main', import.meta.url);

/**
 * When a process runs V8's optimising compiler (TurboFan). It is on by default, as V8 has it; it
 * is off while a process idles (shared/idle-housekeeping.ts decides when), and for the reads that
 * ask for it (supervisor/optimising-compiler.ts).
 *
 * Why off while idle: an idle process still runs a little JavaScript, every few seconds (each
 * process gives its stats every flush interval, the supervisor refreshes its circuit-breaker
 * gauges). V8 optimises any function that has run often enough, however rarely: a small one
 * after a couple of thousand calls. Its first optimisation brings the compiler into the process
 * for good: 4.4 MB of the Node binary's pages resident, and its threads' heaps. Measured on the
 * bench bootstrap, the supervisor's RSS went from 52.4 to 57.3 MB when, 11 minutes into idling,
 * V8 optimised BreakerCounts.total (called 8 times every 5 s).
 *
 * So after a minute idle the compiler is turned off; the first sign of work turns it back on
 * (shared/idle-housekeeping.ts says what counts as either). Code already optimised stays as it is
 * either way.
 *
 * V8's flag hash follows the flag: with it off, V8 refuses code caches made under the default
 * flags (a module loaded then compiles from source). The hooks turn it on before the work they
 * announce loads anything; a load while idle is only slower.
 *
 * An operator's own V8 compiler flags (in the command line or NODE_OPTIONS) are left as given:
 * nothing here changes them.
 */
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

function apply(): void {
  v8Module().setFlagsFromString(idleOff || suspended > 0 ? '--no-turbofan' : '--turbofan');
}

/** The process idles (the compiler goes off), or works again (on). Cheap when nothing changes. */
export function idleCompiler(idle: boolean): void {
  if (idle === idleOff || (idle && compilerFlagsGiven())) return;
  idleOff = idle;
  apply();
  log.debug(idle ? 'idle: the optimising compiler is off until work comes' : 'work again: the optimising compiler is on');
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
