import { native } from './native/index.js';
import { checked } from './optimising-compiler.js';

/**
 * What a process does when it has been idle for a while: it gives its C heap's free pages back
 * to the kernel (glibc's malloc_trim, through the native addon), and after a minute it stops V8's
 * optimising compiler (shared/optimising-compiler.ts, which says why), until work comes again.
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

/** Starts the checks; their timer does not keep the process alive. */
export function idleHousekeeping(): void {
  let since = process.cpuUsage();
  setInterval(() => {
    const used = process.cpuUsage(since);
    since = process.cpuUsage();
    const idle = (used.user + used.system) / 1000 < CHECK_INTERVAL_MS * IDLE_SHARE;
    if (idle) native.mallocTrim();
    checked(idle);
  }, CHECK_INTERVAL_MS).unref();
}
