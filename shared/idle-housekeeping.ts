import { native } from './native/index.js';
import { idleCompiler } from './optimising-compiler.js';

/**
 * What a process does when it has been idle for a while. Every check (each CHECK_INTERVAL_MS) that
 * finds it idle gives its C heap's free pages back to the kernel (glibc's malloc_trim, through the
 * native addon). After IDLE_CHECKS_BEFORE_QUIET checks in a row (a minute), it stops V8's
 * optimising compiler (shared/optimising-compiler.ts, which says why) and shrinks V8's heap (see
 * below), then shrinks it again every IDLE_CHECKS_BETWEEN_SHRINKS checks while it stays idle. The
 * first sign of work ends the idle spell and turns the compiler back on: a check that finds the
 * process busy, or one of the places where work arrives (a worker's new connection, an admin
 * request, an xDS update), which call `working()`.
 *
 * V8's heap: an idle process still allocates a little (each process gives its stats every flush
 * interval: 130-200 KB a minute), and its young generation's pages, once used, stay resident.
 * V8 shrinks them on its own only after its own idle collections, which it makes a minute or so
 * after start and then no more. Measured on the bench bootstrap, the young generation grew from
 * 268 KB to 1.3-1.8 MB in each process over the following ten minutes, and the processes' RSS
 * with it. node::LowMemoryNotification (the addon's lowMemory) collects all garbage and shrinks
 * the spaces back: 10-15 ms for these heaps, once a minute into an idle spell and every two
 * minutes after, while nothing else runs. Every five minutes was tried: the worker was at 45.2
 * MB after ten minutes idle (settled: 44.6), its young generation refilled in between. Envoy's
 * overload manager can shrink its heap the same way on a timer (envoy.overload_actions.shrink_heap,
 * tcmalloc's free memory given back).
 *
 * What the shrink costs when work comes back: its collections free the hidden classes (maps) of
 * objects no longer alive, and V8 throws away optimised code that relied on them (--trace-deopt:
 * "weak objects"), to be optimised again. Measured with two proxies loaded at once, one started
 * fresh and one that had served and then idled 70 s: the one that idled spent 7-9% more CPU per
 * request for the following minute; after 30 s idle (no shrink yet), or with the shrink left out,
 * the two spent the same. Most of it was a per-request object built by spreading optional fields
 * (worker/http/route-dispatch.ts), whose shapes were made anew; with one fixed shape, 2-4%.
 *
 * Node's Buffers, V8's compiler zones and libuv's requests are allocated with malloc. Once they
 * are freed, glibc keeps the memory: free() only returns what is at the heap's top, above a
 * threshold that glibc raises as the process frees large blocks. So a process that was busy, or
 * that works a little all the time (every process sends or gathers stats), keeps free pages
 * resident long after.
 *
 * Measured on the bench bootstrap, when workers still sent their watchdog heartbeats as IPC
 * messages (shared/heartbeats.ts): a worker idle for five minutes held 7.4 MB in its heap, and
 * malloc_trim gave 5.2 MB of it back (RSS 58.5 -> 53.2 MB). The supervisor gave back 0.7 MB, the
 * admin 0.2 MB. After five seconds under 1,000 connections, a worker gave 1.0 MB of its C heap
 * back (its RSS 82.7 -> 81.6 MB: the rest is V8's heap, which V8 shrinks on its own schedule).
 *
 * A process counts as idle when its threads used under IDLE_SHARE of one core's time over the
 * last CHECK_INTERVAL_MS. Under load the heap is reused at once, and pages given back would only
 * be faulted in again. A trim blocks the event loop while glibc walks the heap: 0.01-0.08 ms in a
 * bare process, 4.6 ms for a heap of 200 MB, and 50 ms for the first trim of 200 MB of free,
 * fragmented heap. Trimming only once each time a process becomes idle was tried: the memory the
 * optimising compiler's later work frees then stays (after 150 s idle: worker 50.0 MB against
 * 49.6, admin 45.0 against 44.9).
 */
const CHECK_INTERVAL_MS = 10_000;
const IDLE_SHARE = 0.01;
export const IDLE_CHECKS_BEFORE_QUIET = 6;
export const IDLE_CHECKS_BETWEEN_SHRINKS = 12;

/** Idle checks in a row (0: working). */
let idleChecks = 0;

/** Work is arriving: the idle spell, if any, is over. Cheap when there is none. */
export function working(): void {
  if (idleChecks === 0) return;
  if (idleChecks >= IDLE_CHECKS_BEFORE_QUIET) idleCompiler(false);
  idleChecks = 0;
}

/** A check's verdict: what an idle process does at this point of its idle spell (see above). */
export function checked(idle: boolean): void {
  if (!idle) {
    working();
    return;
  }
  native.mallocTrim();
  idleChecks++;
  if (idleChecks === IDLE_CHECKS_BEFORE_QUIET) idleCompiler(true);
  if (idleChecks >= IDLE_CHECKS_BEFORE_QUIET && (idleChecks - IDLE_CHECKS_BEFORE_QUIET) % IDLE_CHECKS_BETWEEN_SHRINKS === 0) native.lowMemory();
}

/** Starts the checks; their timer does not keep the process alive. */
export function idleHousekeeping(): void {
  let since = process.cpuUsage();
  setInterval(() => {
    const used = process.cpuUsage(since);
    since = process.cpuUsage();
    checked((used.user + used.system) / 1000 < CHECK_INTERVAL_MS * IDLE_SHARE);
  }, CHECK_INTERVAL_MS).unref();
}
